package e2e

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// Group principals in the real run: the cluster-scoped child group of the Waldur project, and
// the incumbent's name, which the adopted project keeps (docs/rancher.md, Migration rule 1).
const (
	realGroup       = "local_project_dark-matter_workloads-manage"
	realLegacyGroup = "project_dark-matter_workloads-manage"
	realParent      = "/c_local/"
)

// realRes are the three resources of the real run.
type realRes struct{ web, train, legacy waldursim.Resource }

// The built binary with an incumbent-style `backend_type: rancher` configuration against the
// real Rancher v2.12.0 (cluster local; Keycloak simulated): create (with the adoption of an
// incumbent project, its norman-made namespace and its group), membership with stale-binding
// removal, usage from the real quota controller, pause/downscale/restore against real quota
// admission, drift repair, update and terminate — one pass of the agent each, asserting on
// Rancher's and Kubernetes' own objects.
func TestRealRancherBackend(t *testing.T) {
	e := newRealRancherEnv(t)
	incumbent := e.seedIncumbent()
	r := e.realCreate(t, incumbent)
	e.realMembership(t, r)
	e.realUsage(t, r)
	e.realPause(t, r.web)
	e.realRepair(t, r)
	up := e.world.UpdateOrder(r.web.UUID, map[string]float64{"cpu": 8, "ram": 16, "storage": 20})
	e.once("order_process")
	if got, _ := e.sim.Order(up.UUID); got.State != waldursim.OrderDone {
		t.Fatalf("update: %s %s", got.State, got.ErrorMessage)
	}
	if got := e.quota(e.ra.prefix + "web"); got["limits.cpu"] != "8" || got["limits.memory"] != "16Gi" {
		t.Fatalf("updated quota %v", got)
	}
	e.realTerminate(t, r)
}

// seedIncumbent makes what the Python plugin left: a project with its annotations, a namespace
// made through norman (/v3/clusters/local/namespaces, so Rancher records its creator), and the
// binding of the incumbent's group name.
func (e *realEnv) seedIncumbent() realProject {
	e.t.Helper()
	var p realProject
	err := e.admin.Do(e.ctx(), http.MethodPost, "/v3/projects", map[string]any{"type": "project", "clusterId": "local",
		"name": e.ra.prefix + "legacy", "description": "legacy (Customer: Institute of Physics, Project: Dark Matter)",
		"annotations": map[string]string{"waldur/organization": "physics", "waldur/managed": "true", "waldur/project_slug": "dark-matter"}}, &p)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.admin.Do(e.ctx(), http.MethodPost, "/v3/clusters/local/namespaces", map[string]any{"type": "namespace",
		"name": e.ra.prefix + "legacy", "projectId": p.ID}, nil); err != nil {
		e.t.Fatal(err)
	}
	e.bind(p.ID, "keycloakoidc_group://"+realLegacyGroup, "workloads-manage")
	return p
}

// realCreate: three Create orders in one pass — two new projects (one on the GPU offering) and
// the incumbent's, adopted.
func (e *realEnv) realCreate(t *testing.T, incumbent realProject) realRes {
	wo := e.world.CreateOrder("web", map[string]float64{"cpu": 4, "ram": 8, "storage": 20})
	to := e.gpuOrder("train", map[string]float64{"cpu": 8, "ram": 32, "gpu_h100": 2})
	lo := e.world.CreateOrder("legacy", map[string]float64{"cpu": 1, "ram": 2})
	e.once("order_process")
	r := realRes{web: resourceOf(t, e.env, wo), train: resourceOf(t, e.env, to), legacy: resourceOf(t, e.env, lo)}
	ps := e.projects()
	if len(ps) != 3 || ps["legacy"].ID != incumbent.ID || r.legacy.BackendID != incumbent.ID {
		t.Fatalf("projects %v; the incumbent's %s must be adopted (backend id %s)", ps, incumbent.ID, r.legacy.BackendID)
	}
	for name, res := range map[string]waldursim.Resource{"web": r.web, "train": r.train, "legacy": r.legacy} {
		p := ps[name]
		group := map[bool]string{true: realLegacyGroup, false: realGroup}[name == "legacy"]
		if p.ID != res.BackendID || p.Annotations["waldur/resource_uuid"] != res.UUID || p.Annotations["waldur/keycloak_group"] != group {
			t.Fatalf("project %s: %+v (resource %s)", name, p, res.BackendID)
		}
		if got := e.groupBindings(p.ID); !slices.Equal(got, []string{"keycloakoidc_group://" + group + "=workloads-manage"}) {
			t.Fatalf("group bindings of %s: %v", name, got)
		}
		ns, err := e.cs.CoreV1().Namespaces().Get(e.ctx(), p.Name, metav1.GetOptions{})
		if err != nil || ns.Annotations["field.cattle.io/projectId"] != p.ID || ns.Labels["field.cattle.io/projectId"] != strings.TrimPrefix(p.ID, "local:") ||
			ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
			t.Fatalf("namespace of %s: %+v %v", name, ns, err)
		}
		e.waitRoleBinding(p.Name, "keycloakoidc_group://"+group)
	}
	if d := cmp.Diff(map[string]string{"limits.cpu": "4", "limits.memory": "8Gi", "requests.storage": "20Gi"}, e.quota(e.ra.prefix+"web")); d != "" {
		t.Fatalf("web quota (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"limits.cpu": "8", "limits.memory": "32Gi", "requests.nvidia.com/gpu-h100": "2"}, e.quota(e.ra.prefix+"train")); d != "" {
		t.Fatalf("train quota (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string][]string{realParent + realGroup: team, realParent + realLegacyGroup: team, "/c_local": nil}, e.kc.Groups(), cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("keycloak groups (-want +got):\n%s", d)
	}
	return r
}

// realMembership: one membership pass keeps the team and removes the keycloakoidc_group
// bindings the agent did not make (another group; its group with another role); the user
// binding Rancher made for the project's creator stays.
func (e *realEnv) realMembership(t *testing.T, r realRes) {
	e.bind(r.web.BackendID, "keycloakoidc_group://intruders", "project-member")
	e.bind(r.web.BackendID, "keycloakoidc_group://"+realGroup, "read-only")
	e.once("membership_sync")
	if got := e.groupBindings(r.web.BackendID); !slices.Equal(got, []string{"keycloakoidc_group://" + realGroup + "=workloads-manage"}) {
		t.Fatalf("bindings of web after the pass: %v", got)
	}
	users := 0
	for _, b := range e.bindings(r.web.BackendID) {
		if b.UserID != "" && b.Removed == "" {
			users++
		}
	}
	if users == 0 {
		t.Fatalf("the project creator's user binding is gone: %+v", e.bindings(r.web.BackendID))
	}
	for _, g := range []string{realGroup, realLegacyGroup} {
		if got := e.kc.Groups()[realParent+g]; !slices.Equal(got, team) {
			t.Fatalf("group %s: %v", g, got)
		}
	}
}

// realUsage: Pending pods counted by the real quota controller are reported to Waldur.
func (e *realEnv) realUsage(t *testing.T, r realRes) {
	web, train := e.ra.prefix+"web", e.ra.prefix+"train"
	e.runPod(web, "app", map[string]string{"cpu": "1500m", "memory": "3Gi"})
	e.runPod(train, "job", map[string]string{"cpu": "2", "memory": "8Gi", "nvidia.com/gpu-h100": "2"})
	e.waitUsed(web, "limits.cpu", "1500m")
	e.waitUsed(train, "requests.nvidia.com/gpu-h100", "2")
	e.once("report")
	if got := usages(e.sim, r.web.UUID); got["cpu"] != 1.5 || got["ram"] != 3 || got["storage"] != 0 {
		t.Fatalf("web usage %v", got)
	}
	if got := usages(e.sim, r.train.UUID); got["gpu_h100"] != 2 || got["cpu"] != 2 || got["ram"] != 8 {
		t.Fatalf("train usage %v", got)
	}
}

// realPause: Waldur's paused flag makes the real quota admission refuse new pods; downscaled
// halves the limits; clearing both restores them — one membership pass each.
func (e *realEnv) realPause(t *testing.T, web waldursim.Resource) {
	ns := e.ra.prefix + "web"
	e.sim.SetResourceFlags(web.UUID, true, false, false)
	e.once("membership_sync")
	if got := e.quota(ns); got["pods"] != "0" || got["limits.cpu"] != "4" {
		t.Fatalf("paused quota %v", got)
	}
	e.waitHard(ns, "pods", "0")
	err := e.tryPod(ns, "refused")
	if err == nil || !strings.Contains(err.Error(), "exceeded quota") {
		t.Fatalf("a pod in a paused namespace: %v", err)
	}
	e.sim.SetResourceFlags(web.UUID, false, true, false)
	e.once("membership_sync")
	if d := cmp.Diff(map[string]string{"limits.cpu": "2", "limits.memory": "4Gi", "requests.storage": "10Gi"}, e.quota(ns)); d != "" {
		t.Fatalf("downscaled quota (-want +got):\n%s", d)
	}
	e.sim.SetResourceFlags(web.UUID, false, false, false)
	e.once("membership_sync")
	if d := cmp.Diff(map[string]string{"limits.cpu": "4", "limits.memory": "8Gi", "requests.storage": "20Gi"}, e.quota(ns)); d != "" {
		t.Fatalf("restored quota (-want +got):\n%s", d)
	}
}

// realRepair: a namespace, a quota, a binding and the group deleted behind the agent's back are
// back after one membership pass (the group with its members).
func (e *realEnv) realRepair(t *testing.T, r realRes) {
	web, train := e.ra.prefix+"web", e.ra.prefix+"train"
	if err := e.cs.CoreV1().Namespaces().Delete(e.ctx(), web, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.cs.CoreV1().ResourceQuotas(train).Delete(e.ctx(), "custom-resource-quota", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, b := range e.bindings(r.train.BackendID) {
		if b.GroupPrincipalID != "" {
			if err := e.admin.Do(e.ctx(), http.MethodDelete, "/v3/projectroletemplatebindings/"+url.PathEscape(b.ID), nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.deleteGroup(realParent + realGroup)
	e.namespaceGone(web)
	waitFor(t, time.Minute, "the train binding gone", func() bool { return len(e.groupBindings(r.train.BackendID)) == 0 })
	e.once("membership_sync")
	if d := cmp.Diff(map[string]string{"limits.cpu": "4", "limits.memory": "8Gi", "requests.storage": "20Gi"}, e.quota(web)); d != "" {
		t.Fatalf("re-created web quota (-want +got):\n%s", d)
	}
	ns, err := e.cs.CoreV1().Namespaces().Get(e.ctx(), web, metav1.GetOptions{})
	if err != nil || ns.Annotations["field.cattle.io/projectId"] != r.web.BackendID {
		t.Fatalf("re-created namespace: %+v %v", ns, err)
	}
	if got := e.quota(train)["requests.nvidia.com/gpu-h100"]; got != "2" {
		t.Fatalf("re-created train quota: %v", e.quota(train))
	}
	if got := e.groupBindings(r.train.BackendID); !slices.Equal(got, []string{"keycloakoidc_group://" + realGroup + "=workloads-manage"}) {
		t.Fatalf("re-created train binding: %v", got)
	}
	if got := e.kc.Groups()[realParent+realGroup]; !slices.Equal(got, team) {
		t.Fatalf("re-created group: %v", got)
	}
}

// realTerminate: the three resources terminated in one pass — web and train share their group —
// leave no project, binding, namespace or group behind.
func (e *realEnv) realTerminate(t *testing.T, r realRes) {
	orders := []waldursim.Order{e.world.TerminateOrder(r.web.UUID), e.world.TerminateOrder(r.train.UUID), e.world.TerminateOrder(r.legacy.UUID)}
	e.once("order_process")
	for _, o := range orders {
		if got, _ := e.sim.Order(o.UUID); got.State != waldursim.OrderDone {
			t.Fatalf("terminate: %s %s", got.State, got.ErrorMessage)
		}
	}
	waitFor(t, time.Minute, "the projects gone", func() bool { return len(e.projects()) == 0 })
	if g := e.kc.Groups(); len(g) != 0 {
		t.Fatalf("keycloak groups left: %v", g)
	}
	for _, res := range []waldursim.Resource{r.web, r.train, r.legacy} {
		waitFor(t, time.Minute, "the bindings of "+res.BackendID+" gone", func() bool { return len(e.bindings(res.BackendID)) == 0 })
	}
	for _, n := range []string{"web", "train", "legacy"} {
		e.namespaceGone(e.ra.prefix + n)
	}
}

// waitHard waits until the quota's status.hard shows the amount (the quota controller copies
// spec.hard there; admission checks against it).
func (e *realEnv) waitHard(ns, key, want string) {
	e.t.Helper()
	waitFor(e.t, time.Minute, ns+" hard "+key+"="+want, func() bool {
		q, err := e.cs.CoreV1().ResourceQuotas(ns).Get(e.ctx(), "custom-resource-quota", metav1.GetOptions{})
		v, ok := q.Status.Hard[corev1.ResourceName(key)]
		return err == nil && ok && v.String() == want
	})
}

// tryPod creates a restricted-profile pod and returns the API server's answer.
func (e *realEnv) tryPod(ns, name string) error {
	no, yes := false, true
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		Containers: []corev1.Container{{Name: "c", Image: "registry.example/idle:1", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}},
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}}}}
	_, err := e.cs.CoreV1().Pods(ns).Create(e.ctx(), p, metav1.CreateOptions{})
	return err
}
