package rancher

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/sim/keycloaksim"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
)

// eventually repeats op like the agent's cycles do (a transient failure leaves the order or
// resource for the next pass), failing the test on a permanent error.
func eventually(t *testing.T, what string, op func(ctx context.Context) error) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		err := op(ctxT(t))
		if err == nil {
			return
		}
		if !failure.IsTransient(err) {
			t.Fatalf("%s: permanent error on attempt %d: %v", what, attempt, err)
		}
		if attempt == 20 {
			t.Fatalf("%s: still failing after %d passes: %v", what, attempt, err)
		}
	}
}

func allFaults(f *fixture, seed int64) {
	f.rs.SetFaults(ranchersim.Faults{Rate: 0.3, Seed: seed, Kinds: []ranchersim.FaultKind{ranchersim.Fault500, ranchersim.Fault502,
		ranchersim.Fault503, ranchersim.Fault429, ranchersim.FaultReset, ranchersim.FaultLoseResponse}})
	f.kc.SetFaults(keycloaksim.Faults{Rate: 0.3, Seed: seed + 1, Kinds: []keycloaksim.FaultKind{keycloaksim.Fault500, keycloaksim.Fault502,
		keycloaksim.Fault503, keycloaksim.Fault429, keycloaksim.FaultReset, keycloaksim.FaultLoseResponse}})
}

func noFaults(f *fixture) {
	f.rs.SetFaults(ranchersim.Faults{})
	f.kc.SetFaults(keycloaksim.Faults{})
}

// With 30% of Rancher (v3 and Kubernetes proxy) and Keycloak requests failing — 5xx, 429,
// resets and responses lost after the change was made — every operation converges through
// retries and repeated passes, and nothing is made twice.
func TestFaultsConverge(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true, keycloak: true})
	for _, u := range []string{"alice", "bob", "carol"} {
		f.kc.AddUser(u)
	}
	be := f.backend(nil, WithInventoryTTL(0))
	prov, mm, rec := be.(backends.Provisioner), be.(backends.MembershipManager), be.(backends.Reconciler)
	allFaults(f, 11)
	const n = 8
	team := []backends.Member{{Username: "alice"}, {Username: "bob"}}
	var resources []backends.Resource
	for i := 0; i < n; i++ {
		res := f.resource(i)
		res.ProjectSlug = fmt.Sprintf("proj%d", i%3)
		eventually(t, "create "+res.Slug, func(ctx context.Context) error {
			info, err := prov.Create(ctx, backends.CreateRequest{Resource: res, Name: res.Slug, Members: team})
			res.BackendID = info.BackendID
			return err
		})
		eventually(t, "reconcile "+res.Slug, func(ctx context.Context) error { return rec.Reconcile(ctx, res) })
		eventually(t, "add carol to "+res.Slug, func(ctx context.Context) error {
			return mm.AddMembers(ctx, res, []backends.Member{{Username: "carol"}})
		})
		resources = append(resources, res)
	}
	faults := len(f.rs.FaultLog()) + len(f.kc.FaultLog())
	noFaults(f)
	if faults < 20 {
		t.Fatalf("only %d faults were injected; the test proves nothing", faults)
	}
	t.Logf("%d rancher and %d keycloak faults injected", len(f.rs.FaultLog()), len(f.kc.FaultLog()))
	assertOnce(t, f, resources)

	allFaults(f, 13)
	for _, res := range resources {
		eventually(t, "delete "+res.Slug, func(ctx context.Context) error { return prov.Delete(ctx, res) })
	}
	noFaults(f)
	if len(f.rs.Projects()) != 0 || len(f.rs.Bindings()) != 0 || len(f.kc.Groups()) != 0 {
		t.Fatalf("left after deleting everything: groups %v\n%s", f.kc.Groups(), f.rs)
	}
	poll(t, time.Minute, "namespaces to go", func() (bool, error) {
		nss, err := core(be).projectNamespaces(ctxT(t))
		var left []string
		for _, res := range resources {
			for _, ns := range nss[res.BackendID] {
				left = append(left, ns.Name)
			}
		}
		sort.Strings(left)
		return len(left) == 0, fmt.Errorf("left: %v (err %v)", left, err)
	})
}

// assertOnce checks that every resource has exactly one project, binding and quota, and the
// three Waldur projects one group each with the whole team.
func assertOnce(t *testing.T, f *fixture, resources []backends.Resource) {
	t.Helper()
	if ps := f.rs.Projects(); len(ps) != len(resources) {
		t.Fatalf("%d projects for %d resources:\n%s", len(ps), len(resources), f.rs)
	}
	perProject := map[string]int{}
	for _, bd := range f.rs.Bindings() {
		perProject[bd.ProjectID]++
	}
	for _, res := range resources {
		if perProject[res.BackendID] != 1 {
			t.Fatalf("%s has %d bindings:\n%s", res.BackendID, perProject[res.BackendID], f.rs)
		}
		q, err := f.env.Clientset.CoreV1().ResourceQuotas(f.prefix+res.Slug).Get(ctxT(t), quotaName, metav1.GetOptions{})
		if err != nil || len(q.Spec.Hard) != 4 {
			t.Fatalf("quota of %s: %v %v", res.Slug, q, err)
		}
	}
	parent := "/" + parentGroupName(f.cluster)
	want := map[string][]string{parent: {}}
	for i := 0; i < 3; i++ {
		want[parent+"/"+scopedGroupName(f.cluster, fmt.Sprintf("proj%d", i), "workloads-manage")] = []string{"alice", "bob", "carol"}
	}
	if d := cmp.Diff(want, f.kc.Groups()); d != "" {
		t.Fatalf("keycloak groups (-want +got):\n%s", d)
	}
}
