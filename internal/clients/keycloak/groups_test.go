package keycloak

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/sim/keycloaksim"
)

const (
	parent = "c_cmtestpt"
	child  = "project_test-project_workloads-manage"
)

func TestEnsureGroupCreatesOnceAndIsIdempotent(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{})
	var first, second string
	cold := e.admin(func() {
		first = must(e.client.EnsureGroup(ctx(t), parent, "Cluster access group for c-m-test:p-test", child, "Project test-project members"))
	})
	warm := e.admin(func() {
		second = must(e.client.EnsureGroup(ctx(t), parent, "ignored", child, "ignored"))
	})
	if first != second {
		t.Fatalf("ids differ: %s then %s", first, second)
	}
	want := map[string][]string{"/" + parent: {}, "/" + parent + "/" + child: {}}
	if diff := cmp.Diff(want, e.sim.Groups()); diff != "" {
		t.Fatalf("groups (-want +got):\n%s", diff)
	}
	wantAttrs := map[string][]string{"managed_by": {"waldur-site-agent"}, "description": {"Project test-project members"}}
	if diff := cmp.Diff(wantAttrs, e.sim.GroupAttributes("/"+parent+"/"+child)); diff != "" {
		t.Errorf("child attributes (-want +got):\n%s", diff)
	}
	if got := e.sim.GroupAttributes("/" + parent)["description"]; len(got) != 1 || !strings.HasPrefix(got[0], "Cluster access") {
		t.Errorf("parent description = %v", got)
	}
	// Cold: search parent, create parent, create child. Warm: the cached child, no request.
	if cold != 3 || warm != 0 {
		t.Errorf("admin requests: cold %d (want 3), warm %d (want 0)", cold, warm)
	}
	t.Logf("EnsureGroup requests: cold create %d, warm %d, token fetches %d", cold, warm, e.sim.TokenFetches())
}

func TestEnsureGroupAdoptsExistingGroups(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{})
	pid := must(e.sim.AddGroup("", parent))
	cid := must(e.sim.AddGroup(pid, child))
	// Decoys: a nested group with the parent's name and a LIKE-match of the child's name.
	other := must(e.sim.AddGroup("", "other"))
	must(e.sim.AddGroup(other, parent))
	must(e.sim.AddGroup(pid, strings.ReplaceAll(child, "_", "X")))
	var got string
	n := e.admin(func() { got = must(e.client.EnsureGroup(ctx(t), parent, "", child, "")) })
	if got != cid {
		t.Fatalf("EnsureGroup = %s, want the existing %s", got, cid)
	}
	if n != 3 { // find the parent, create the child (409), find the child
		t.Errorf("adopting existing groups took %d requests, want 3", n)
	}
	if len(e.sim.Groups()) != 5 {
		t.Errorf("groups were created: %v", e.sim.Groups())
	}
}

func TestEnsureGroupConcurrentAgents(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{})
	second, _ := e.newClient(Config{})
	clients := []*Client{e.client, second}
	ids := make([]string, 10)
	errs := make([]error, 10)
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i], errs[i] = clients[i%2].EnsureGroup(ctx(t), parent, "", child, "")
		}()
	}
	wg.Wait()
	for i := range 10 {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Fatalf("goroutine %d: id %q err %v (first id %q)", i, ids[i], errs[i], ids[0])
		}
	}
	want := map[string][]string{"/" + parent: {}, "/" + parent + "/" + child: {}}
	if diff := cmp.Diff(want, e.sim.Groups()); diff != "" {
		t.Fatalf("groups (-want +got):\n%s", diff)
	}
	t.Logf("10 concurrent EnsureGroup calls from 2 clients: %v", e.sim.Calls())
}

func TestEnsureGroupLostCreateResponse(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{})
	e.sim.FailNext(keycloaksim.RouteCreateGroup, 1, keycloaksim.FaultLoseResponse)
	e.sim.FailNext(keycloaksim.RouteCreateChild, 1, keycloaksim.FaultLoseResponse)
	id := must(e.client.EnsureGroup(ctx(t), parent, "", child, ""))
	want, _ := e.sim.GroupID("/" + parent + "/" + child)
	if id != want || len(e.sim.Groups()) != 2 {
		t.Fatalf("id %s (want %s), groups %v", id, want, e.sim.Groups())
	}
	calls := e.sim.Calls()
	// The retried POST met the group its lost first attempt created: 409, then a lookup.
	if calls[keycloaksim.RouteCreateGroup] != 2 || calls[keycloaksim.RouteCreateChild] != 2 ||
		calls[keycloaksim.RouteGroups] != 2 || calls[keycloaksim.RouteChildren] != 1 {
		t.Errorf("calls = %v", calls)
	}
}

// A group deleted behind the client's back keeps its cached id until Keycloak says it is gone
// (EnsureGroup sends no request for a cached group): the member call that meets the 404 drops
// it, and the next EnsureGroup re-creates the group (and the parent when that went too).
func TestEnsureGroupRepairsStaleCache(t *testing.T) {
	tests := []struct {
		name   string
		remove string // path deleted behind the client's back
	}{
		{"child deleted", "/" + parent + "/" + child},
		{"parent deleted", "/" + parent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, keycloaksim.Options{})
			u := e.sim.AddUser("member")
			old := must(e.client.EnsureGroup(ctx(t), parent, "", child, ""))
			other, _ := e.newClient(Config{})
			gid, _ := e.sim.GroupID(tt.remove)
			noErr(t, other.DeleteGroup(ctx(t), gid))
			if err := e.client.AddMember(ctx(t), u.ID, old); !errors.Is(err, failure.ErrNotFound) {
				t.Fatalf("AddMember to a deleted group: %v", err)
			}
			id := must(e.client.EnsureGroup(ctx(t), parent, "", child, ""))
			now, ok := e.sim.GroupID("/" + parent + "/" + child)
			if !ok || id != now || id == old {
				t.Fatalf("EnsureGroup = %s, group now %s (ok %v), old %s", id, now, ok, old)
			}
		})
	}
}

func TestFindChildGroup(t *testing.T) {
	tests := []struct {
		name      string
		opts      keycloaksim.Options
		setup     func(t *testing.T, sim *keycloaksim.Server) string // returns the expected id
		wantFound bool
	}{
		{"no parent", keycloaksim.Options{}, func(*testing.T, *keycloaksim.Server) string { return "" }, false},
		{"parent without the child", keycloaksim.Options{}, func(t *testing.T, sim *keycloaksim.Server) string {
			must(sim.AddGroup("", parent))
			return ""
		}, false},
		{"only a LIKE match exists", keycloaksim.Options{}, func(t *testing.T, sim *keycloaksim.Server) string {
			pid := must(sim.AddGroup("", parent))
			must(sim.AddGroup(pid, strings.ReplaceAll(child, "_", "X")))
			return ""
		}, false},
		{"exact match beside a LIKE match", keycloaksim.Options{}, func(t *testing.T, sim *keycloaksim.Server) string {
			pid := must(sim.AddGroup("", parent))
			must(sim.AddGroup(pid, strings.ReplaceAll(child, "_", "X")))
			return must(sim.AddGroup(pid, child))
		}, true},
		{"Keycloak 24.0 ignores search: later page", keycloaksim.Options{ChildrenSearchIgnored: true}, func(t *testing.T, sim *keycloaksim.Server) string {
			pid := must(sim.AddGroup("", parent))
			for i := range 150 {
				must(sim.AddGroup(pid, fmt.Sprintf("a%03d", i)))
			}
			return must(sim.AddGroup(pid, child))
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.opts)
			want := tt.setup(t, e.sim)
			id, found, err := e.client.FindChildGroup(ctx(t), parent, child)
			if err != nil || found != tt.wantFound || id != want {
				t.Fatalf("FindChildGroup = %q, %v, %v; want %q, %v", id, found, err, want, tt.wantFound)
			}
		})
	}
}

func TestSteadyStateLookupCost(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{})
	gid := must(e.client.EnsureGroup(ctx(t), parent, "", child, ""))
	for i := range 3 {
		u := e.sim.AddUser(fmt.Sprintf("user%d", i))
		noErr(t, e.sim.AddMember(u.ID, gid))
	}
	fresh, _ := e.newClient(Config{})
	lookup := func(c *Client) func() {
		return func() {
			id, found, err := c.FindChildGroup(ctx(t), parent, child)
			if err != nil || !found || id != gid {
				t.Fatalf("FindChildGroup = %q, %v, %v", id, found, err)
			}
			if m := must(c.Members(ctx(t), id)); len(m) != 3 {
				t.Fatalf("Members = %v", m)
			}
		}
	}
	cold := e.admin(lookup(fresh))
	warm := e.admin(lookup(fresh))
	if cold != 3 || warm != 1 {
		t.Errorf("FindChildGroup+Members requests: cold %d (want 3), warm %d (want 1)", cold, warm)
	}
	t.Logf("FindChildGroup+Members requests: cold %d, warm %d", cold, warm)
}

func TestStaleCachedChildIsDroppedOnUse(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{})
	gid := must(e.client.EnsureGroup(ctx(t), parent, "", child, ""))
	other, _ := e.newClient(Config{})
	noErr(t, other.DeleteGroup(ctx(t), gid))
	// The warm cache still answers, the first use reports the group gone and drops it...
	id, found := must2(e.client.FindChildGroup(ctx(t), parent, child))
	if !found || id != gid {
		t.Fatalf("warm FindChildGroup = %q, %v", id, found)
	}
	_, err := e.client.Members(ctx(t), gid)
	if !errors.Is(err, failure.ErrNotFound) || failure.IsTransient(err) {
		t.Fatalf("Members of a deleted group: %v", err)
	}
	// ...so the next lookup asks Keycloak again.
	if _, found := must2(e.client.FindChildGroup(ctx(t), parent, child)); found {
		t.Fatal("FindChildGroup still finds the deleted group")
	}
}

func must2(id string, found bool, err error) (string, bool) {
	if err != nil {
		panic(err)
	}
	return id, found
}

func TestDeleteGroupIsIdempotent(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{})
	gid := must(e.client.EnsureGroup(ctx(t), parent, "", child, ""))
	noErr(t, e.client.DeleteGroup(ctx(t), gid))
	noErr(t, e.client.DeleteGroup(ctx(t), gid))
	if diff := cmp.Diff(map[string][]string{"/" + parent: {}}, e.sim.Groups()); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
}

func TestDeleteParentIfEmpty(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{})
	gid := must(e.client.EnsureGroup(ctx(t), parent, "", child, ""))
	if deleted := must(e.client.DeleteParentIfEmpty(ctx(t), parent)); deleted {
		t.Fatal("deleted a parent that has a child")
	}
	noErr(t, e.client.DeleteGroup(ctx(t), gid))
	pid, _ := e.sim.GroupID("/" + parent)
	u := e.sim.AddUser("direct")
	noErr(t, e.sim.AddMember(u.ID, pid))
	if deleted := must(e.client.DeleteParentIfEmpty(ctx(t), parent)); deleted {
		t.Fatal("deleted a parent that has a direct member")
	}
	noErr(t, e.client.RemoveMember(ctx(t), u.ID, pid))
	if deleted := must(e.client.DeleteParentIfEmpty(ctx(t), parent)); !deleted {
		t.Fatal("did not delete an empty parent")
	}
	if len(e.sim.Groups()) != 0 {
		t.Fatalf("groups left: %v", e.sim.Groups())
	}
	if deleted := must(e.client.DeleteParentIfEmpty(ctx(t), parent)); deleted {
		t.Fatal("deleted a missing parent")
	}
	// The parent's cache entries are gone: EnsureGroup builds both levels again.
	must(e.client.EnsureGroup(ctx(t), parent, "", child, ""))
	if len(e.sim.Groups()) != 2 {
		t.Fatalf("groups after re-create: %v", e.sim.Groups())
	}
}

func TestGroupNamesAreCheckedBeforeAnyRequest(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{})
	long := strings.Repeat("ü", MaxGroupName+1)
	ok255 := strings.Repeat("ü", MaxGroupName)
	calls := []struct {
		name string
		fn   func() error
	}{
		{"EnsureGroup child", func() error { _, err := e.client.EnsureGroup(ctx(t), parent, "", long, ""); return err }},
		{"EnsureGroup parent", func() error { _, err := e.client.EnsureGroup(ctx(t), long, "", child, ""); return err }},
		{"FindChildGroup", func() error { _, _, err := e.client.FindChildGroup(ctx(t), parent, long); return err }},
		{"DeleteParentIfEmpty", func() error { _, err := e.client.DeleteParentIfEmpty(ctx(t), long); return err }},
		{"empty name", func() error { _, err := e.client.EnsureGroup(ctx(t), "", "", child, ""); return err }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			err := c.fn()
			msg, public := failure.PublicMessage(err)
			if !public || (!strings.Contains(msg, "at most 255") && !strings.Contains(msg, "empty")) {
				t.Fatalf("error %v is not a clear failure.Error", err)
			}
		})
	}
	if n := e.sim.TokenFetches() + e.sim.AdminCalls(); n != 0 {
		t.Errorf("refused names still sent %d requests", n)
	}
	must(e.client.EnsureGroup(ctx(t), parent, "", ok255, ""))
}
