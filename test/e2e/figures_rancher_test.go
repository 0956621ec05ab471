package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/keycloaksim"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/sim/waldursim"
	"github.com/waldur/site-agent/internal/testenv"
	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// figureRancher measures the Rancher + Keycloak backend (a real kube-apiserver behind the
// Rancher simulator, Waldur with 1 ms latency): orders Create orders drained from launch with
// the requests per order per upstream (start-up included), then a membership pass over
// resources resources in 10 Waldur projects (so 10 Keycloak groups) when nothing changed.
// Not measured outside the real-server tier or without the Kubernetes binaries.
func figureRancher(b *testing.B, bin string, t *table, orders, resources int) {
	label := fmt.Sprintf("%d Create orders, Rancher + Keycloak", orders)
	if err := testenv.Gate(); err != nil {
		t.add(label, "not measured: set "+testenv.EnvRealTests+"=1 (make bench does)", "")
		return
	}
	if dir, ok := kubeenv.BinDir(); !ok {
		t.add(label, "not measured: no kube-apiserver in "+dir+" (scripts/kube/build.sh)", "")
		return
	}
	kube := kubeenv.Start(b)
	ck := newClock()
	e := startRancherSims(b, &ranchersim.Upstream{Host: kube.Host, Token: kube.Token, CAData: kube.CAData},
		waldursim.Options{Latency: time.Millisecond, ValidateResponses: waldursim.Bool(false)}, ck.wrap)
	e.writeRancherConfig(true)
	for j := 0; j < orders; j++ {
		e.world.CreateOrder(fmt.Sprintf("k%03d", j), map[string]float64{"cpu": 2, "ram": 4, "storage": 10})
	}
	ck.reset()
	e.rs.ResetCalls()
	rs := runOnce(b, bin, "-m", "order_process", "-c", e.config, "--once")
	if s := e.orderStates(); s[waldursim.OrderDone] != orders {
		b.Fatalf("orders %v", s)
	}
	_, last, counts := ck.times()
	v3, k8s := e.rs.Total()
	per := func(x int) string { return fmt.Sprintf("%.2f", float64(x)/float64(orders)) }
	t.add(label+" drained (agent CPU, peak RSS)", fmt.Sprintf("%.3f s (%.2f s CPU, %.1f MiB)",
		last.Sub(rs.started).Seconds(), rs.cpu.Seconds(), rs.maxRSS), "")
	t.add(label+": requests per order — Waldur", per(counts["waldur"]), "≤ 5")
	t.add(label+": requests per order — Rancher v3 + Kubernetes", per(v3)+" + "+per(k8s)+" = "+per(v3+k8s), "≤ 4")
	t.add(label+": requests per order — Keycloak", per(counts["keycloak"]), "≤ 1")
	rancherMembership(b, bin, t, e, ck, orders, resources)
}

// rancherMembership spreads resources-done more resources over 9 more projects with the same
// team, then measures the second membership pass (the first one adds nothing either, but
// records metadata).
func rancherMembership(b *testing.B, bin string, t *table, e *rancherEnv, ck *clock, done, resources int) {
	const projects = 10
	var uuids []string
	for p := 1; p < projects; p++ {
		proj := e.sim.AddProject(waldursim.Project{Name: fmt.Sprintf("Project %d", p), Slug: fmt.Sprintf("proj-%d", p),
			CustomerUUID: e.world.Customer.UUID})
		for _, u := range e.world.Users {
			e.sim.AddProjectMember(proj.UUID, u.UUID, "PROJECT.MEMBER")
		}
		uuids = append(uuids, proj.UUID)
	}
	for k := 0; k < resources-done; k++ {
		e.sim.AddOrder(waldursim.Order{Type: waldursim.OrderCreate, OfferingUUID: e.world.Offering.UUID, ProjectUUID: uuids[k%len(uuids)],
			PlanUUID: e.world.Plan.UUID, Limits: map[string]float64{"cpu": 1, "ram": 1}, Attributes: map[string]any{"name": fmt.Sprintf("m%03d", k)}})
	}
	runOnce(b, bin, "-m", "order_process", "-c", e.config, "--once")
	if s := e.orderStates(); s[waldursim.OrderDone] != resources {
		b.Fatalf("orders %v, want %d done", s, resources)
	}
	runOnce(b, bin, "-m", "membership_sync", "-c", e.config, "--once")
	ck.reset()
	e.rs.ResetCalls()
	e.kc.ResetCalls()
	rs := runOnce(b, bin, "-m", "membership_sync", "-c", e.config, "--once")
	_, _, counts := ck.times()
	v3, k8s := e.rs.Total()
	label := fmt.Sprintf("membership pass over %d Rancher resources in %d projects, nothing changed", resources, projects)
	t.add(label+": Keycloak member reads", fmt.Sprint(e.kc.Calls()[keycloaksim.RouteMembers]), "≤ 10")
	t.add(label+": time (agent CPU, peak RSS); requests Waldur / Rancher v3 + Kubernetes / Keycloak",
		fmt.Sprintf("%.2f s (%.2f s CPU, %.1f MiB); %d / %d + %d / %d", rs.wall.Seconds(), rs.cpu.Seconds(), rs.maxRSS,
			counts["waldur"], v3, k8s, counts["keycloak"]), "")
}
