package rancher

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/waldur/site-agent/internal/backends"
)

// Resources of one Waldur project share its child group; the group goes with the last of them
// and the parent group when it has no children left (the incumbent deleted a shared group with
// the first resource).
func TestSharedGroupLifecycle(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true, keycloak: true})
	f.kc.AddUser("alice")
	f.kc.AddUser("bob")
	be := f.backend(nil)
	prov, mm := be.(backends.Provisioner), be.(backends.MembershipManager)
	ctx := ctxT(t)
	r1 := mustCreate(t, be, f.resource(1), backends.Member{Username: "alice"})
	r2 := mustCreate(t, be, f.resource(2), backends.Member{Username: "alice"}, backends.Member{Username: "bob"})
	parent := "/" + parentGroupName(f.cluster)
	child := parent + "/" + scopedGroupName(f.cluster, "proj", "workloads-manage")
	want := map[string][]string{parent: {}, child: {"alice", "bob"}}
	if d := cmp.Diff(want, f.kc.Groups()); d != "" {
		t.Fatalf("groups (-want +got):\n%s", d)
	}
	if n := len(f.rs.Bindings()); n != 2 {
		t.Fatalf("want one binding per project, got %d:\n%s", n, f.rs)
	}
	for _, r := range []backends.Resource{r1, r2} {
		got, err := mm.Members(ctx, r)
		if err != nil || !slices.Equal(got, []string{"alice", "bob"}) {
			t.Fatalf("members of %s: %v %v", r.Slug, got, err)
		}
	}
	if err := prov.Delete(ctx, r1); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.kc.GroupID(child); !ok || len(f.rs.Bindings()) != 1 {
		t.Fatalf("the group is still used by %s and must stay:\n%v\n%s", r2.BackendID, f.kc.Groups(), f.rs)
	}
	if err := prov.Delete(ctx, r2); err != nil {
		t.Fatal(err)
	}
	if g := f.kc.Groups(); len(g) != 0 || len(f.rs.Bindings()) != 0 {
		t.Fatalf("after the last resource: groups %v, bindings:\n%s", g, f.rs)
	}
	if err := prov.Delete(ctx, r2); err != nil {
		t.Fatalf("second delete: %v", err)
	}
}

// Users missing in Keycloak are reported, not fatal.
func TestMissingUsersAreReported(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true, keycloak: true})
	f.kc.AddUser("alice")
	be := f.backend(nil)
	res := mustCreate(t, be, f.resource(1))
	mm := be.(backends.MembershipManager)
	ctx := ctxT(t)
	if err := mm.AddMembers(ctx, res, []backends.Member{{Username: "ghost"}, {Username: "alice"}, {Username: "casper"}}); err != nil {
		t.Fatalf("missing users must not fail the call: %v", err)
	}
	got, _ := mm.Members(ctx, res)
	if !slices.Equal(got, []string{"alice"}) {
		t.Fatalf("members %v", got)
	}
	md, err := be.(backends.MetadataReader).Metadata(ctx, res)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"casper", "ghost"}, md["keycloak_missing_users"]); d != "" {
		t.Fatalf("metadata %v", md)
	}
	if err := mm.AddMembers(ctx, res, []backends.Member{{Username: "alice"}}); err != nil {
		t.Fatal(err)
	}
	if md, _ := be.(backends.MetadataReader).Metadata(ctx, res); md["keycloak_missing_users"] != nil {
		t.Fatalf("missing users are cleared once they are gone from the team: %v", md)
	}
}

// keycloak_use_user_id decides how members are named: Keycloak ids (which must equal the
// offering usernames) or usernames. A user found by the username fallback keeps the name Waldur
// uses, even across a restart, so the membership diff never flaps.
func TestMemberIdentity(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true, keycloak: true})
	f.kc.AddUser("alice")
	if err := f.kc.SetUserID("alice", "7f1d0c1e-alice-id"); err != nil {
		t.Fatal(err)
	}
	f.kc.AddUser("bob") // random id; Waldur calls him "bob"
	ctx := ctxT(t)

	byID := f.backend(nil)
	res := mustCreate(t, byID, f.resource(1))
	mm := byID.(backends.MembershipManager)
	if err := mm.AddMembers(ctx, res, []backends.Member{{Username: "7f1d0c1e-alice-id"}, {Username: "bob"}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := mm.Members(ctx, res); !slices.Equal(got, []string{"7f1d0c1e-alice-id", "bob"}) {
		t.Fatalf("by id: %v", got)
	}

	// A restarted agent does not know yet that "bob" was matched by username: the first diff
	// sees his id, adds "bob" and removes the id in the same pass. Bob must stay.
	restarted := f.backend(nil).(backends.MembershipManager)
	if added, removed := syncPass(t, restarted, res, []string{"7f1d0c1e-alice-id", "bob"}); added != 1 || removed != 1 {
		t.Fatalf("expected the restart diff to add bob and remove his id: +%d -%d", added, removed)
	}
	if got, _ := restarted.Members(ctx, res); !slices.Equal(got, []string{"7f1d0c1e-alice-id", "bob"}) {
		t.Fatalf("after the restart pass: %v (groups %v)", got, f.kc.Groups())
	}
	// Removing "bob" for real works by the name Waldur uses.
	if err := restarted.RemoveMembers(ctx, res, []string{"bob"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := restarted.Members(ctx, res); !slices.Equal(got, []string{"7f1d0c1e-alice-id"}) {
		t.Fatalf("after removing bob: %v", got)
	}

	byName := f.backend(map[string]any{"keycloak_use_user_id": false}).(backends.MembershipManager)
	if err := byName.AddMembers(ctx, res, []backends.Member{{Username: "bob"}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := byName.Members(ctx, res); !slices.Equal(got, []string{"alice", "bob"}) {
		t.Fatalf("by username: %v", got)
	}
	if err := byName.RemoveMembers(ctx, res, []string{"alice", "nobody"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := byName.Members(ctx, res); !slices.Equal(got, []string{"bob"}) {
		t.Fatalf("by username after removal: %v", got)
	}
	if err := byID.(backends.Provisioner).Delete(ctx, res); err != nil {
		t.Fatal(err)
	}
}

// syncPass does what the membership mode does: diff, add, then remove.
func syncPass(t *testing.T, mm backends.MembershipManager, res backends.Resource, desired []string) (added, removed int) {
	t.Helper()
	current, err := mm.Members(ctxT(t), res)
	if err != nil {
		t.Fatal(err)
	}
	var add []backends.Member
	var remove []string
	for _, u := range desired {
		if !slices.Contains(current, u) {
			add = append(add, backends.Member{Username: u})
		}
	}
	for _, u := range current {
		if !slices.Contains(desired, u) {
			remove = append(remove, u)
		}
	}
	if err := mm.AddMembers(ctxT(t), res, add); err != nil {
		t.Fatal(err)
	}
	if err := mm.RemoveMembers(ctxT(t), res, remove); err != nil {
		t.Fatal(err)
	}
	return len(add), len(remove)
}
