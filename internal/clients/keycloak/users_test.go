package keycloak

import (
	"errors"
	"fmt"
	"testing"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/sim/keycloaksim"
)

func TestFindUser(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{})
	alice := e.sim.AddUser("Alice")
	e.sim.AddUser("malice")
	e.sim.AddUser("alice2")
	e.sim.AddUser("waldur-bob")
	noErr(t, e.sim.SetUserID("waldur-bob", "bob-id-from-waldur"))
	tests := []struct {
		name      string
		ident     string
		byID      bool
		want      User
		wantFound bool
		wantCalls int
	}{
		{"by id", alice.ID, true, User{alice.ID, "alice"}, true, 1},
		{"by an id chosen in Waldur", "bob-id-from-waldur", true, User{"bob-id-from-waldur", "waldur-bob"}, true, 1},
		{"by id falls back to the username", "ALICE", true, User{alice.ID, "alice"}, true, 2},
		{"by id, nobody", "carol", true, User{}, false, 2},
		{"by exact username, any case", "Alice", false, User{alice.ID, "alice"}, true, 1},
		{"a substring is not a match", "lice", false, User{}, false, 1},
		{"an id is not a username", alice.ID, false, User{}, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got User
			var found bool
			var err error
			n := e.admin(func() { got, found, err = e.client.FindUser(ctx(t), tt.ident, tt.byID) })
			if err != nil || found != tt.wantFound || got != tt.want {
				t.Fatalf("FindUser = %+v, %v, %v; want %+v, %v", got, found, err, tt.want, tt.wantFound)
			}
			if n != tt.wantCalls {
				t.Errorf("%d requests, want %d", n, tt.wantCalls)
			}
		})
	}
	if _, _, err := e.client.FindUser(ctx(t), " ", true); err == nil {
		t.Error("an empty identifier was accepted")
	}
}

func TestMembersFollowsPages(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{})
	gid := must(e.client.EnsureGroup(ctx(t), parent, "", child, ""))
	for i := range 250 {
		u := e.sim.AddUser(fmt.Sprintf("user%03d", i))
		noErr(t, e.sim.AddMember(u.ID, gid))
	}
	var members []User
	n := e.admin(func() { members = must(e.client.Members(ctx(t), gid)) })
	if len(members) != 250 || members[0].Username != "user000" || members[249].Username != "user249" {
		t.Fatalf("Members returned %d users (%v … %v)", len(members), members[0], members[len(members)-1])
	}
	seen := map[string]bool{}
	for _, m := range members {
		if seen[m.ID] {
			t.Fatalf("duplicate member %v", m)
		}
		seen[m.ID] = true
	}
	if n != 3 {
		t.Errorf("250 members took %d requests, want 3 pages of 100", n)
	}
	t.Logf("Members of 250 users: %d requests", n)
}

func TestMembershipIsIdempotent(t *testing.T) {
	e := newEnv(t, keycloaksim.Options{})
	gid := must(e.client.EnsureGroup(ctx(t), parent, "", child, ""))
	u := e.sim.AddUser("dana")
	path := "/" + parent + "/" + child
	steps := []struct {
		name string
		fn   func() error
		want []string
	}{
		{"add", func() error { return e.client.AddMember(ctx(t), u.ID, gid) }, []string{"dana"}},
		{"add again", func() error { return e.client.AddMember(ctx(t), u.ID, gid) }, []string{"dana"}},
		{"remove", func() error { return e.client.RemoveMember(ctx(t), u.ID, gid) }, []string{}},
		{"remove again", func() error { return e.client.RemoveMember(ctx(t), u.ID, gid) }, []string{}},
		{"remove a missing user", func() error { return e.client.RemoveMember(ctx(t), "nobody", gid) }, []string{}},
		{"remove from a missing group", func() error { return e.client.RemoveMember(ctx(t), u.ID, "nogroup") }, []string{}},
	}
	for _, s := range steps {
		noErr(t, s.fn())
		got := e.sim.Groups()[path]
		if fmt.Sprint(got) != fmt.Sprint(s.want) {
			t.Fatalf("after %s: members %v, want %v", s.name, got, s.want)
		}
	}
	for _, tc := range []struct{ user, group string }{{"nobody", gid}, {u.ID, "nogroup"}} {
		err := e.client.AddMember(ctx(t), tc.user, tc.group)
		if !errors.Is(err, failure.ErrNotFound) || failure.IsTransient(err) {
			t.Errorf("AddMember(%s, %s) = %v, want a permanent not-found error", tc.user, tc.group, err)
		}
	}
}
