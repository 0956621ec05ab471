package keycloak

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/waldur/site-agent/internal/sim/keycloaksim"
)

// The group life cycle works against the Keycloak versions sites still run: 19 (GET groups
// ignores exact), 22 (no GET groups/{id}/children; subgroups inline), 24.0.2 (children search
// ignored) and the default 26. Decoys make a substring or LIKE search return the wrong groups,
// and a hundred look-alike roots make an inexact search page.
func TestGroupLifecycleAcrossVersions(t *testing.T) {
	for _, tc := range []struct {
		opts   keycloaksim.Options
		inline bool
	}{
		{keycloaksim.Options{Version: "19.0.3"}, true},
		{keycloaksim.Options{Version: "22.0.5"}, true},
		{keycloaksim.Options{Version: "24.0.2", ChildrenSearchIgnored: true}, false},
		{keycloaksim.Options{}, false},
	} {
		t.Run("keycloak "+tc.opts.Version, func(t *testing.T) {
			e := newEnv(t, tc.opts)
			for i := range 100 { // substring matches of the parent's name, sorted before it
				must(e.sim.AddGroup("", fmt.Sprintf("%03d_%s", i, parent)))
			}
			pid := must(e.sim.AddGroup("", parent))
			must(e.sim.AddGroup(pid, strings.ReplaceAll(child, "_", "X")))
			existing := must(e.sim.AddGroup(pid, child))

			fresh, _ := e.newClient(Config{})
			if id, found, err := fresh.FindChildGroup(ctx(t), parent, child); err != nil || !found || id != existing {
				t.Fatalf("FindChildGroup = %s %v %v, want %s", id, found, err, existing)
			}
			if id := must(e.client.EnsureGroup(ctx(t), parent, "", child, "")); id != existing {
				t.Fatalf("EnsureGroup adopted %s, want %s", id, existing)
			}
			other := must(e.client.EnsureGroup(ctx(t), parent, "", "project_other_role", ""))
			u := e.sim.AddUser("member")
			noErr(t, e.client.AddMember(ctx(t), u.ID, other))
			if got := must(e.client.Members(ctx(t), other)); len(got) != 1 || got[0].Username != "member" {
				t.Fatalf("members %v", got)
			}
			if gone := must(e.client.DeleteParentIfEmpty(ctx(t), parent)); gone {
				t.Fatal("a parent with children was deleted")
			}
			decoy, _ := e.sim.GroupID("/" + parent + "/" + strings.ReplaceAll(child, "_", "X"))
			for _, id := range []string{existing, other, decoy} {
				noErr(t, e.client.DeleteGroup(ctx(t), id))
			}
			if gone := must(e.client.DeleteParentIfEmpty(ctx(t), parent)); !gone {
				t.Fatalf("empty parent kept: %v", e.sim.Groups())
			}
			if got := e.client.inlineChildren.Load(); got != tc.inline {
				t.Errorf("inline children mode = %v, want %v", got, tc.inline)
			}
			if u := e.sim.Unimplemented(); len(u) != 0 {
				t.Errorf("unmodelled requests: %v", u)
			}
		})
	}
}

func TestServerVersion(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{Version: "22.0.5"})
	if v := must(e.client.ServerVersion(ctx(t))); v != "22.0.5" {
		t.Fatalf("version %q", v)
	}
	cases := []struct {
		version   string
		supported bool
		note      string
	}{
		{"26.0.7", true, "supported 18–26"},
		{"22.0.5", true, "read from their parent"},
		{"18.0.2.redhat-00001", true, "groups/{id}/children"},
		{"17.0.1", false, "older than the supported"},
		{"27.1.0", true, "newer than the tested"},
	}
	for _, tc := range cases {
		note, ok := VersionNote(tc.version)
		if ok != tc.supported || !strings.Contains(note, tc.note) {
			t.Errorf("VersionNote(%q) = %q %v", tc.version, note, ok)
		}
	}
}

// Without role claims in the token (lightweight access tokens), the rights are read from the
// access flags Keycloak reports on a group; with no group to ask about, the check fails and
// says why.
func TestCheckRightsWithoutRoleClaims(t *testing.T) {
	for _, tc := range []struct {
		name   string
		roles  []string
		groups bool
		want   string // "" = the rights are proven
	}{
		{"manage-users, a group exists", []string{keycloaksim.RoleManageUsers}, true, ""},
		{"view-users, a group exists", []string{keycloaksim.RoleViewUsers}, true, "may not manage group"},
		{"manage-users, no group", []string{keycloaksim.RoleManageUsers}, false, "could not be checked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, keycloaksim.Options{LightweightTokens: true,
				Admin: &keycloaksim.Admin{Username: "admin", Password: testPassword, Roles: tc.roles}})
			if tc.groups {
				must(e.sim.AddGroup("", "some-group"))
			}
			detail, err := e.client.CheckRights(ctx(t))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("CheckRights: %v", err)
			case tc.want == "" && !strings.Contains(detail, "manageMembership"):
				t.Fatalf("detail %q", detail)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "manage-users")):
				t.Fatalf("CheckRights = %q %v, want an error mentioning %q and manage-users", detail, err, tc.want)
			}
		})
	}
	// A managed realm that is the admin's own realm names realm-management.
	e := newEnv(t, keycloaksim.Options{Realm: "master", Admin: &keycloaksim.Admin{Username: "admin", Password: testPassword,
		Roles: []string{keycloaksim.RoleQueryGroups}}})
	c, _ := e.newClient(Config{Realm: "master"})
	if _, err := c.CheckRights(ctx(t)); err == nil || !strings.Contains(err.Error(), "realm-management") {
		t.Fatalf("same-realm admin: %v", err)
	}
	if d := cmp.Diff([]string(nil), e.sim.Unimplemented()); d != "" {
		t.Fatal(d)
	}
}
