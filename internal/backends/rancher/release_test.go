package rancher

import (
	"sync"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends"
)

// Issue 16: two Terminates of resources sharing a Keycloak group, in one pass (orders of
// different resources run in parallel). Each deletes its project's binding, then looks for other
// projects bound to the group. Rancher lists a deleted binding, with `removed`, until its
// controllers have run (seconds under load), so each saw the other's binding on its way out
// and kept the group for it: afterwards no binding was left, and the group and its members were
// never deleted. Here both bindings are deleted before either looks.
func TestSharedGroupGoesWithTwoTerminatesInOnePass(t *testing.T) {
	f := newFixture(t, fixtureOpts{keycloak: true, removeDelay: time.Minute})
	group := scopedGroupName(f.cluster, "proj", "workloads-manage")
	r1 := f.seedProject(f.resource(1), f.cluster, group, "alice")
	r2 := f.seedProject(f.resource(2), f.cluster, group, "alice")
	b := core(f.backend(nil))
	ctx := ctxT(t)
	for _, r := range []backends.Resource{r1, r2} {
		if _, err := b.ensureBinding(ctx, r.BackendID, group, nil, false); err != nil {
			t.Fatal(err)
		}
	}
	var deleted, wg sync.WaitGroup
	deleted.Add(2)
	errs := make([]error, 2)
	for i, r := range []backends.Resource{r1, r2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := b.deleteBindings(ctx, r.BackendID)
			deleted.Done()
			deleted.Wait() // both bindings are on their way out before either terminate looks
			if err == nil {
				err = b.releaseAccess(ctx, r, b.groupsOf(r, Project{}))
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if g := f.kc.Groups(); len(g) != 0 {
		t.Fatalf("the shared group (and its parent) must go with the last terminate: %v", g)
	}
}

// The same through Delete, both at once, against the real kube-apiserver behind the simulator.
func TestTwoTerminatesSharingAGroup(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true, keycloak: true, removeDelay: 10 * time.Second})
	f.kc.AddUser("alice")
	be := f.backend(nil)
	r1 := mustCreate(t, be, f.resource(1), backends.Member{Username: "alice"})
	r2 := mustCreate(t, be, f.resource(2), backends.Member{Username: "alice"})
	ctx := ctxT(t)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, r := range []backends.Resource{r1, r2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = be.(backends.Provisioner).Delete(ctx, r)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if g := f.kc.Groups(); len(g) != 0 || len(f.rs.Projects()) != 0 {
		t.Fatalf("left after both terminates: groups %v\n%s", g, f.rs)
	}
}
