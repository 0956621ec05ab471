package e2e

import (
	"fmt"
	"testing"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// Requests one `order_process --once` run makes per Create order to Waldur, Rancher (v3 and
// the Kubernetes proxy) and Keycloak, for a single order (process start-up included: identity
// registration, the Rancher cluster ping, Keycloak token) and amortised over a batch. The incumbent made
// 25 Waldur and 5 Rancher requests per order with Keycloak off. Upper bounds keep regressions
// visible; the numbers are logged (go test -v -run TestRancherRequestsPerCreateOrder).
func TestRancherRequestsPerCreateOrder(t *testing.T) {
	for _, kc := range []bool{false, true} {
		for _, batch := range []int{1, 10} {
			t.Run(fmt.Sprintf("keycloak=%v/orders=%d", kc, batch), func(t *testing.T) {
				e := newRancherEnv(t, kc)
				for i := 0; i < batch; i++ {
					e.world.CreateOrder(fmt.Sprintf("r%02d", i), map[string]float64{"cpu": 2, "ram": 4, "storage": 10})
				}
				e.sim.ResetCalls()
				e.rs.ResetCalls()
				e.kc.ResetCalls()
				e.once("order_process")
				if s := e.orderStates(); s[waldursim.OrderDone] != batch {
					t.Fatalf("orders %v", s)
				}
				v3, k8s := e.rs.Total()
				kcCalls := 0
				for _, n := range e.kc.Calls() {
					kcCalls += n
				}
				per := func(n int) float64 { return float64(n) / float64(batch) }
				t.Logf("per Create order: waldur %.1f, rancher v3 %.1f, kubernetes proxy %.1f, keycloak %.1f (waldur calls %v)",
					per(e.sim.TotalCalls()), per(v3), per(k8s), per(kcCalls), e.sim.Calls())
				// Start-up per offering (two here): the cluster ping (no schema document is read), then
				// one project listing per pass; each order: project, namespace, quota (and binding) POSTs.
				// Keycloak: token and ping per offering, the group once, the team once (3 users).
				key := fmt.Sprintf("%v/%d", kc, batch)
				limit := map[string]float64{"false/1": 10, "false/10": 4, "true/1": 11, "true/10": 5}[key]
				kcLimit := map[string]float64{"false/1": 0, "false/10": 0, "true/1": 15, "true/10": 1.5}[key]
				if per(v3+k8s) > limit || per(kcCalls) > kcLimit {
					t.Fatalf("rancher requests per order %.1f exceed %v, keycloak %.1f exceed %v", per(v3+k8s), limit, per(kcCalls), kcLimit)
				}
				if per(e.sim.TotalCalls()) > 25 {
					t.Fatalf("waldur requests per order %.1f exceed the incumbent's 25", per(e.sim.TotalCalls()))
				}
			})
		}
	}
}
