package keycloak

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/waldur/site-agent/internal/sim/keycloaksim"
)

// TestRequestCounts pins the number of admin API requests per operation (token requests
// excluded; one token serves every call within its lifetime). The Rancher issue's target is
// that steady-state lookups never scan all groups.
func TestRequestCounts(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{})
	u := e.sim.AddUser("member")
	var fillers []string
	for i := range 100 {
		fillers = append(fillers, e.sim.AddUser(fmt.Sprintf("filler%03d", i)).ID)
	}
	var gid string
	fresh, _ := e.newClient(Config{}) // a second agent with a cold cache
	steps := []struct {
		name string
		want int
		fn   func()
	}{
		{"Ping", 1, func() { noErr(t, e.client.Ping(ctx(t))) }},
		{"CheckRights", 1, func() { must(e.client.CheckRights(ctx(t))) }},
		{"EnsureGroup, nothing exists (find parent, create parent, create child)", 3, func() { gid = must(e.client.EnsureGroup(ctx(t), parent, "", child, "")) }},
		{"EnsureGroup, warm cache", 0, func() { must(e.client.EnsureGroup(ctx(t), parent, "", child, "")) }},
		{"EnsureGroup, groups exist, cold cache (find parent, 409, find child)", 3, func() { must(fresh.EnsureGroup(ctx(t), parent, "", child, "")) }},
		{"FindChildGroup, warm cache", 0, func() { must2(e.client.FindChildGroup(ctx(t), parent, child)) }},
		{"FindUser by id", 1, func() { findUser(t, e.client, u.ID, true) }},
		{"FindUser by id, username fallback", 2, func() { findUser(t, e.client, "member", true) }},
		{"FindUser by username", 1, func() { findUser(t, e.client, "member", false) }},
		{"AddMember", 1, func() { noErr(t, e.client.AddMember(ctx(t), u.ID, gid)) }},
		{"Members, 1 member", 1, func() { must(e.client.Members(ctx(t), gid)) }},
		{"RemoveMember", 1, func() { noErr(t, e.client.RemoveMember(ctx(t), u.ID, gid)) }},
		{"Members, 100 members (a full page, then an empty one)", 2, func() {
			for _, m := range fillers {
				noErr(t, e.sim.AddMember(m, gid))
			}
			must(e.client.Members(ctx(t), gid))
		}},
		{"DeleteGroup", 1, func() { noErr(t, e.client.DeleteGroup(ctx(t), gid)) }},
		{"FindChildGroup after delete, parent cached", 1, func() { must2(e.client.FindChildGroup(ctx(t), parent, child)) }},
		{"DeleteParentIfEmpty, parent cached", 3, func() { must(e.client.DeleteParentIfEmpty(ctx(t), parent)) }},
		{"FindChildGroup, no parent", 1, func() { must2(e.client.FindChildGroup(ctx(t), parent, child)) }},
	}
	for _, s := range steps {
		got := e.admin(s.fn)
		t.Logf("%-55s %d request(s)", s.name, got)
		if got != s.want {
			t.Errorf("%s: %d requests, want %d", s.name, got, s.want)
		}
	}
	if got := e.sim.TokenFetches(); got != 2 {
		t.Errorf("token fetches = %d, want 2 (one per client)", got)
	}
	// The client sends only what Keycloak declares, apart from gocloak's legacy "full" flag that
	// accompanies briefRepresentation (Keycloak ignores it).
	if diff := cmp.Diff([]string{"GET groups/{id}/members: full", "GET groups: full"}, e.sim.IgnoredQuery()); diff != "" {
		t.Errorf("ignored query parameters (-want +got):\n%s", diff)
	}
	if f, u := e.sim.IgnoredFields(), e.sim.Unimplemented(); len(f)+len(u) != 0 {
		t.Errorf("ignored fields %v, unmodelled requests %v", f, u)
	}
}

func TestLookupCostDoesNotGrowWithTheTree(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{})
	for i := range 300 {
		pid := must(e.sim.AddGroup("", fmt.Sprintf("c_other%03d", i)))
		for j := range 3 {
			must(e.sim.AddGroup(pid, fmt.Sprintf("project_%d_role", j)))
		}
	}
	pid := must(e.sim.AddGroup("", parent))
	want := must(e.sim.AddGroup(pid, child))
	var id string
	n := e.admin(func() { id, _ = must2(e.client.FindChildGroup(ctx(t), parent, child)) })
	if id != want || n != 2 {
		t.Fatalf("FindChildGroup among 1200 groups: id %s (want %s), %d requests (want 2)", id, want, n)
	}
}

func findUser(t *testing.T, c *Client, ident string, byID bool) {
	t.Helper()
	if _, found, err := c.FindUser(ctx(t), ident, byID); err != nil || !found {
		t.Fatalf("FindUser(%q, %v) = %v, %v", ident, byID, found, err)
	}
}

// BenchmarkSteadyStateLookup is one membership-sync lookup on a warm cache: FindChildGroup and
// Members of a 20-member group (one request).
func BenchmarkSteadyStateLookup(b *testing.B) {
	e := newEnv(b, keycloaksim.Options{})
	c := ctx(b)
	gid := must(e.client.EnsureGroup(c, parent, "", child, ""))
	for i := range 20 {
		noErr(b, e.sim.AddMember(e.sim.AddUser(fmt.Sprintf("u%02d", i)).ID, gid))
	}
	for b.Loop() {
		id, _, err := e.client.FindChildGroup(c, parent, child)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.client.Members(c, id); err != nil {
			b.Fatal(err)
		}
	}
}
