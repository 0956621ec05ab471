package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/clients/keycloak"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/keycloaksim"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

const e2eGroup = "/c_cme2e000/c-m-e2e00001_project_dark-matter_workloads-manage" // cluster-scoped (issue 7)

var team = []string{"phys_alice", "phys_bob", "phys_carol"}

// The built binary with an incumbent-style `backend_type: rancher` configuration: orders
// through to real namespaces and quotas (a GPU pool offering included), membership into
// Keycloak groups, usage computed by the real quota controller, repair of deleted objects,
// update and terminate.
func TestRancherEndToEnd(t *testing.T) {
	e := newRancherEnv(t, true)
	web, train := e.createPhase(t)
	e.membershipPhase(t)
	e.usagePhase(t, web, train)
	e.repairPhase(t)

	up := e.world.UpdateOrder(web.UUID, map[string]float64{"cpu": 8, "ram": 16, "storage": 20})
	e.once("order_process")
	if got, _ := e.sim.Order(up.UUID); got.State != waldursim.OrderDone {
		t.Fatalf("update: %s %s", got.State, got.ErrorMessage)
	}
	if got := e.quota("waldur-web"); got["limits.cpu"] != "8" || got["limits.memory"] != "16Gi" {
		t.Fatalf("updated quota %v", got)
	}
	t1, t2 := e.world.TerminateOrder(web.UUID), e.world.TerminateOrder(train.UUID)
	e.once("order_process")
	for _, o := range []waldursim.Order{t1, t2} {
		if got, _ := e.sim.Order(o.UUID); got.State != waldursim.OrderDone {
			t.Fatalf("terminate: %s %s", got.State, got.ErrorMessage)
		}
	}
	if len(e.rs.Projects()) != 0 || len(e.rs.Bindings()) != 0 || len(e.kc.Groups()) != 0 {
		t.Fatalf("left after terminate: groups %v\n%s", e.kc.Groups(), e.rs)
	}
}

// createPhase: two Create orders (one on the GPU offering) and one with an invalid name.
func (e *rancherEnv) createPhase(t *testing.T) (web, train waldursim.Resource) {
	wo := e.world.CreateOrder("web", map[string]float64{"cpu": 4, "ram": 8, "storage": 20})
	to := e.gpuOrder("train", map[string]float64{"cpu": 8, "ram": 32, "gpu_h100": 2})
	bad := e.world.CreateOrder("bad_name", map[string]float64{"cpu": 1})
	e.once("order_process")
	if got, _ := e.sim.Order(bad.UUID); got.State != waldursim.OrderRejected || !contains(got.ProviderRejectionComment, "is not valid") {
		t.Fatalf("an order whose namespace name is invalid must be rejected before approval: %s %q", got.State, got.ProviderRejectionComment)
	}
	web, train = resourceOf(t, e.env, wo), resourceOf(t, e.env, to)
	names := projectNames(e.rs)
	slices.Sort(names)
	if !slices.Equal(names, []string{"waldur-train", "waldur-web"}) {
		t.Fatalf("rancher projects %v", names)
	}
	if d := cmp.Diff(map[string]string{"limits.cpu": "4", "limits.memory": "8Gi", "requests.storage": "20Gi"}, e.quota("waldur-web")); d != "" {
		t.Fatalf("web quota (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"limits.cpu": "8", "limits.memory": "32Gi", "requests.nvidia.com/gpu-h100": "2"}, e.quota("waldur-train")); d != "" {
		t.Fatalf("train quota (-want +got):\n%s", d)
	}
	ns, err := e.cs.CoreV1().Namespaces().Get(e.ctx(), "waldur-train", metav1.GetOptions{})
	if err != nil || ns.Labels["gpu-pool"] != "h100-2x" || ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" ||
		ns.Annotations["field.cattle.io/projectId"] != train.BackendID {
		t.Fatalf("gpu namespace: %+v %v", ns, err)
	}
	return web, train
}

// membershipPhase: the Waldur project's team lands in one shared group bound to both projects.
func (e *rancherEnv) membershipPhase(t *testing.T) {
	e.once("membership_sync")
	if got := e.kc.Groups()[e2eGroup]; !slices.Equal(got, team) {
		t.Fatalf("group %s: %v (all: %v)", e2eGroup, got, e.kc.Groups())
	}
	if n := len(e.rs.Bindings()); n != 2 {
		t.Fatalf("bindings: %d\n%s", n, e.rs)
	}
	// A new process does not know that bob and carol were found by the username fallback
	// (keycloak_use_user_id: true, their ids are not their Waldur usernames): it re-confirms
	// them with an idempotent add, and never removes anyone.
	e.kc.ResetCalls()
	e.once("membership_sync")
	if got := e.kc.Calls(); got[keycloaksim.RouteLeaveGroup] != 0 || got[keycloaksim.RouteJoinGroup] > 4 {
		t.Fatalf("an unchanged team caused membership changes: %v", got)
	}
	if got := e.kc.Groups()[e2eGroup]; !slices.Equal(got, team) {
		t.Fatalf("group %s after a second pass: %v", e2eGroup, got)
	}
}

// usagePhase: Pending pods counted by the real quota controller are reported to Waldur.
func (e *rancherEnv) usagePhase(t *testing.T, web, train waldursim.Resource) {
	e.runPod("waldur-web", "app", map[string]string{"cpu": "1500m", "memory": "3Gi"})
	e.runPod("waldur-train", "job", map[string]string{"cpu": "2", "memory": "8Gi", "nvidia.com/gpu-h100": "2"})
	e.waitUsed("waldur-web", "limits.cpu", "1500m")
	e.waitUsed("waldur-train", "requests.nvidia.com/gpu-h100", "2")
	e.once("report")
	if got := usages(e.sim, web.UUID); got["cpu"] != 1.5 || got["ram"] != 3 || got["storage"] != 0 {
		t.Fatalf("web usage %v", got)
	}
	if got := usages(e.sim, train.UUID); got["gpu_h100"] != 2 || got["cpu"] != 2 || got["ram"] != 8 {
		t.Fatalf("train usage %v", got)
	}
}

// repairPhase: a namespace, a quota and the group deleted behind the agent's back are back
// after one membership pass (the group with its members).
func (e *rancherEnv) repairPhase(t *testing.T) {
	cs := e.cs
	if err := cs.CoreV1().Namespaces().Delete(e.ctx(), "waldur-web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().ResourceQuotas("waldur-train").Delete(e.ctx(), "custom-resource-quota", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.deleteGroup(e2eGroup)
	waitFor(t, time.Minute, "namespace waldur-web gone", func() bool {
		_, err := cs.CoreV1().Namespaces().Get(e.ctx(), "waldur-web", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	e.once("membership_sync")
	if d := cmp.Diff(map[string]string{"limits.cpu": "4", "limits.memory": "8Gi", "requests.storage": "20Gi"}, e.quota("waldur-web")); d != "" {
		t.Fatalf("re-created web quota (-want +got):\n%s", d)
	}
	if got := e.quota("waldur-train")["requests.nvidia.com/gpu-h100"]; got != "2" {
		t.Fatalf("re-created train quota: %v", e.quota("waldur-train"))
	}
	if got := e.kc.Groups()[e2eGroup]; !slices.Equal(got, team) {
		t.Fatalf("re-created group %s: %v", e2eGroup, got)
	}
}

// deleteGroup deletes a Keycloak group through a separate admin client.
func (e *rancherEnv) deleteGroup(path string) {
	e.t.Helper()
	id, ok := e.kc.GroupID(path)
	if !ok {
		e.t.Fatalf("no group %s", path)
	}
	c, err := keycloak.New(keycloak.Config{URL: e.kcURL, Username: "admin", Password: secret.New("admin")}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	defer c.Close()
	if err := c.DeleteGroup(e.ctx(), id); err != nil {
		e.t.Fatal(err)
	}
}

// With 30% of Rancher (v3 and Kubernetes proxy) and Keycloak requests failing, a running agent
// still finishes every order, none erred, with one project and one binding per resource.
func TestRancherFaults(t *testing.T) {
	e := newRancherEnv(t, true)
	const n = 6
	var orders []waldursim.Order
	for i := 0; i < n; i++ {
		orders = append(orders, e.world.CreateOrder(fmt.Sprintf("f%d", i), map[string]float64{"cpu": 1, "ram": 2}))
	}
	orders = append(orders, e.gpuOrder("fgpu", map[string]float64{"cpu": 1, "ram": 2, "gpu_h100": 1}))
	e.rs.SetFaults(ranchersim.Faults{Rate: 0.3, Seed: 5})
	e.kc.SetFaults(keycloaksim.Faults{Rate: 0.3, Seed: 6})
	p := e.start("-m", "order_process", "-c", e.config, "--period", "300ms")
	waitFor(t, 3*time.Minute, "all orders done", func() bool {
		s := e.orderStates()
		if s[waldursim.OrderErred] > 0 {
			t.Fatalf("an order erred under transient faults: %v\n%s", s, p.out)
		}
		return s[waldursim.OrderDone] == len(orders)
	})
	if len(e.rs.FaultLog()) == 0 || len(e.kc.FaultLog()) == 0 {
		t.Fatalf("faults injected: rancher %d, keycloak %d", len(e.rs.FaultLog()), len(e.kc.FaultLog()))
	}
	if ps := e.rs.Projects(); len(ps) != len(orders) || len(e.rs.Bindings()) != len(orders) {
		t.Fatalf("%d projects and %d bindings for %d orders:\n%s", len(ps), len(e.rs.Bindings()), len(orders), e.rs)
	}
	for _, o := range orders {
		e.world.TerminateOrder(resourceOf(t, e.env, o).UUID)
	}
	waitFor(t, 3*time.Minute, "all terminations done", func() bool {
		s := e.orderStates()
		if s[waldursim.OrderErred] > 0 {
			t.Fatalf("a termination erred: %v\n%s", s, p.out)
		}
		return s[waldursim.OrderDone] == 2*len(orders)
	})
	p.kill()
	if len(e.rs.Projects()) != 0 || len(e.kc.Groups()) != 0 {
		t.Fatalf("left after terminating: groups %v\n%s", e.kc.Groups(), e.rs)
	}
}
