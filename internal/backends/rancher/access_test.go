package rancher

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/sim/keycloaksim"
)

// seedProject makes, without the backend, a project of res in cluster (as an earlier pass
// would have) with its group recorded, and the group in Keycloak with members; it returns res
// with its backend id.
func (f *fixture) seedProject(res backends.Resource, cluster, group string, members ...string) backends.Resource {
	f.t.Helper()
	ann := map[string]string{annOrganization: res.CustomerSlug, annManaged: "true", annProjectSlug: res.ProjectSlug,
		annResourceUUID: res.UUID}
	if group != "" {
		ann[annGroup] = group
	}
	p, err := f.rs.AddProject(cluster, f.prefix+res.Slug, ann)
	if err != nil {
		f.t.Fatal(err)
	}
	res.BackendID = p.ID
	if f.kc == nil || group == "" {
		return res
	}
	pid, ok := f.kc.GroupID("/" + parentGroupName(f.cluster))
	if !ok {
		pid = mustV(f.t)(f.kc.AddGroup("", parentGroupName(f.cluster)))
	}
	gid, ok := f.kc.GroupID("/" + parentGroupName(f.cluster) + "/" + group)
	if !ok {
		gid = mustV(f.t)(f.kc.AddGroup(pid, group))
	}
	for _, m := range members {
		if err := f.kc.AddMember(f.kc.AddUser(m).ID, gid); err != nil { // AddUser returns an existing user

			f.t.Fatal(err)
		}
	}
	return res
}

func mustV(t testing.TB) func(string, error) string {
	return func(v string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// Item 1: with keycloak_use_user_id: false an offering username that differs from Keycloak's
// only in case ("Alice" for Keycloak's "alice") is the same user: the first pass after a start
// keeps her (the add is a no-op, the removal of "alice" is skipped), later passes change
// nothing. It flapped: removed and re-added on alternating passes.
func TestUsernameCaseDoesNotFlap(t *testing.T) {
	f := newFixture(t, fixtureOpts{keycloak: true})
	group := scopedGroupName(f.cluster, "proj", "workloads-manage")
	res := f.seedProject(f.resource(1), f.cluster, group, "alice", "bob")
	desired := []string{"Alice", "bob"}
	for pass := 1; pass <= 3; pass++ {
		mm := f.backend(map[string]any{"keycloak_use_user_id": false}).(backends.MembershipManager)
		if pass == 3 {
			mm = f.backend(map[string]any{"keycloak_use_user_id": false}, WithInventoryTTL(time.Minute)).(backends.MembershipManager)
		}
		for round := 1; round <= 2; round++ { // a restarted agent, then the same agent's next pass
			syncPass(t, mm, res, desired)
			path := "/" + parentGroupName(f.cluster) + "/" + group
			if got := f.kc.Groups()[path]; !slices.Equal(got, []string{"alice", "bob"}) {
				t.Fatalf("process %d pass %d: group members %v", pass, round, got)
			}
		}
		if added, removed := syncPass(t, mm, res, desired); added+removed != 0 {
			t.Fatalf("process %d: a settled pass changed members: +%d -%d", pass, added, removed)
		}
	}
	// Alice leaving the team is still a removal, by the name Waldur uses.
	mm := f.backend(map[string]any{"keycloak_use_user_id": false}).(backends.MembershipManager)
	syncPass(t, mm, res, desired)
	syncPass(t, mm, res, []string{"bob"})
	if got := f.kc.Groups()["/"+parentGroupName(f.cluster)+"/"+group]; !slices.Equal(got, []string{"bob"}) {
		t.Fatalf("after alice left: %v", got)
	}
}

// Item 6: a Terminate of a resource whose backend id is a project of another cluster (after
// cluster_id changed) is refused while that project exists, with a message naming both
// clusters; once it is gone the Terminate is done. Lookup and Reconcile say the same instead
// of "not found".
func TestForeignClusterProjectIsRefused(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	be := f.backend(nil)
	res := f.seedProject(f.resource(1), f.other, "")
	err := be.(backends.Provisioner).Delete(ctxT(t), res)
	msg, public := failure.PublicMessage(err)
	if !public || failure.IsTransient(err) || !strings.Contains(msg, f.other) || !strings.Contains(msg, f.cluster) {
		t.Fatalf("want a permanent public error naming %s and %s, got %v", f.other, f.cluster, err)
	}
	if len(f.rs.Projects()) != 1 {
		t.Fatalf("the other cluster's project was touched:\n%s", f.rs)
	}
	for name, fn := range map[string]func() error{
		"lookup":    func() error { _, err := be.(backends.Provisioner).Lookup(ctxT(t), res); return err },
		"reconcile": func() error { return be.(backends.Reconciler).Reconcile(ctxT(t), res) },
	} {
		if err := fn(); err == nil || errors.Is(err, failure.ErrNotFound) || !strings.Contains(err.Error(), f.other) {
			t.Errorf("%s: %v", name, err)
		}
	}
	f.rs.RemoveProjectRecord(res.BackendID)
	if err := be.(backends.Provisioner).Delete(ctxT(t), res); err != nil {
		t.Fatalf("the project is gone, terminate is done: %v", err)
	}
}

// Item 2: with Keycloak down, Ping says only access is not ready (wrapping
// backends.ErrAccessNotReady, not ErrNotReady), and access calls fail at once, without
// Keycloak requests, with a transient error wrapping it; when Keycloak answers again they work.
func TestKeycloakOutageHoldsBackOnlyAccess(t *testing.T) {
	f := newFixture(t, fixtureOpts{keycloak: true})
	group := scopedGroupName(f.cluster, "proj", "workloads-manage")
	res := f.seedProject(f.resource(1), f.cluster, group, "alice")
	be := f.backend(nil)
	ctx := ctxT(t)
	f.kc.SetFaults(keycloaksim.Faults{Rate: 1, Seed: 1, Kinds: []keycloaksim.FaultKind{keycloaksim.Fault503}})
	err := be.(backends.Pinger).Ping(ctx)
	if !errors.Is(err, backends.ErrAccessNotReady) || errors.Is(err, failure.ErrNotReady) {
		t.Fatalf("ping with keycloak down: %v", err)
	}
	f.kc.ResetCalls()
	mm := be.(backends.MembershipManager)
	_, errMembers := mm.Members(ctx, res)
	errAdd := mm.AddMembers(ctx, res, []backends.Member{{Username: "bob"}})
	for _, err := range []error{errMembers, errAdd} {
		if !errors.Is(err, backends.ErrAccessNotReady) || !failure.IsTransient(err) {
			t.Fatalf("access call while keycloak is down: %v", err)
		}
	}
	if n := f.kc.AdminCalls(); n != 0 {
		t.Fatalf("%d keycloak requests while it is known to be down", n)
	}
	f.kc.SetFaults(keycloaksim.Faults{})
	if err := be.(backends.Pinger).Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := mm.Members(ctx, res); err != nil || !slices.Equal(got, []string{f.kc.AddUser("alice").ID}) {
		t.Fatalf("members after keycloak is back: %v %v", got, err)
	}
}
