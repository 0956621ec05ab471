package keycloaksim

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type userOut struct {
	ID       string `json:"id"`
	Username string `json:"username"`
}

func usernames(us []userOut) []string {
	out := []string{}
	for _, u := range us {
		out = append(out, u.Username)
	}
	return out
}

func TestUserSearch(t *testing.T) {
	h := start(t, Options{})
	for _, n := range []string{"Alice", "alice2", "bob", "malice"} {
		h.sim.AddUser(n)
	}
	tests := []struct {
		name, query string
		want        []string
	}{
		{"exact username is case-insensitive equality", "?username=ALICE&exact=true", []string{"alice"}},
		{"username without exact is a substring", "?username=alice", []string{"alice", "alice2", "malice"}},
		{"search", "?search=LIC", []string{"alice", "alice2", "malice"}},
		{"paging", "?username=alice&first=1&max=1", []string{"alice2"}},
		{"no match", "?username=carol&exact=true", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, _ := h.do(http.MethodGet, "/users"+tt.query, "")
			if status != http.StatusOK {
				t.Fatalf("HTTP %d %s", status, body)
			}
			var got []userOut
			mustJSON(t, body, &got)
			if diff := cmp.Diff(tt.want, usernames(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestUserByIDAndSetUserID(t *testing.T) {
	h := start(t, Options{})
	u := h.sim.AddUser("dave")
	g := h.mkGroup("", "g")
	if err := h.sim.AddMember(u.ID, g); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.SetUserID("dave", "waldur-user-1"); err != nil {
		t.Fatal(err)
	}
	status, body, _ := h.do(http.MethodGet, "/users/waldur-user-1", "")
	if status != http.StatusOK || !strings.Contains(string(body), `"username":"dave"`) {
		t.Fatalf("by new id: HTTP %d %s", status, body)
	}
	status, body, _ = h.do(http.MethodGet, "/users/"+u.ID, "")
	if status != http.StatusNotFound || string(body) != `{"error":"User not found"}` {
		t.Fatalf("by old id: HTTP %d %s", status, body)
	}
	_, body, _ = h.do(http.MethodGet, "/groups/"+g+"/members", "")
	var members []userOut
	mustJSON(t, body, &members)
	if len(members) != 1 || members[0].ID != "waldur-user-1" {
		t.Errorf("membership did not follow the id: %s", body)
	}
}

func TestMembership(t *testing.T) {
	h := start(t, Options{})
	u := h.sim.AddUser("erin")
	g := h.mkGroup("", "g")
	tests := []struct {
		name, method, path string
		want               int
		wantBody           string
	}{
		{"join", "PUT", "/users/" + u.ID + "/groups/" + g, 204, ""},
		{"join again is idempotent", "PUT", "/users/" + u.ID + "/groups/" + g, 204, ""},
		{"unknown group", "PUT", "/users/" + u.ID + "/groups/nosuch", 404, `{"error":"Group not found"}`},
		{"unknown user wins over unknown group", "PUT", "/users/nosuch/groups/nosuch", 404, `{"error":"User not found"}`},
		{"leave", "DELETE", "/users/" + u.ID + "/groups/" + g, 204, ""},
		{"leave a group the user is not in", "DELETE", "/users/" + u.ID + "/groups/" + g, 204, ""},
		{"leave an unknown group", "DELETE", "/users/" + u.ID + "/groups/nosuch", 404, "Group not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, _ := h.do(tt.method, tt.path, "")
			if status != tt.want || !strings.Contains(string(body), tt.wantBody) {
				t.Fatalf("HTTP %d %s, want %d %s", status, body, tt.want, tt.wantBody)
			}
		})
	}
	h.sim.SetAdminRoles(RoleViewUsers)
	if status, _, _ := h.do(http.MethodPut, "/users/"+u.ID+"/groups/nosuch", ""); status != 403 {
		t.Errorf("view-users joining an unknown group: HTTP %d, want 403 (rights before group)", status)
	}
}

func TestMembersPaging(t *testing.T) {
	h := start(t, Options{})
	g := h.mkGroup("", "big")
	for i := range 150 {
		u := h.sim.AddUser(fmt.Sprintf("user%03d", i))
		if err := h.sim.AddMember(u.ID, g); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		query     string
		wantLen   int
		wantFirst string
	}{
		{"", 100, "user000"},
		{"?first=100", 50, "user100"},
		{"?first=140&max=5&briefRepresentation=true", 5, "user140"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			_, body, _ := h.do(http.MethodGet, "/groups/"+g+"/members"+tt.query, "")
			var got []userOut
			mustJSON(t, body, &got)
			if len(got) != tt.wantLen || got[0].Username != tt.wantFirst {
				t.Errorf("got %d members starting %q, want %d starting %q", len(got), got[0].Username, tt.wantLen, tt.wantFirst)
			}
		})
	}
}
