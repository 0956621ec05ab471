package keycloaksim

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRoutingStrictness(t *testing.T) {
	h := start(t, Options{})
	gid := h.mkGroup("", "g")
	tests := []struct {
		name, method, path, body string
		want                     int
		wantBody                 string
	}{
		{"unknown path", "GET", "/nope", "", 404, `"HTTP 404 Not Found"`},
		{"unknown group child", "GET", "/groups/" + gid + "/nope", "", 404, ""},
		{"empty segment", "GET", "/groups//children", "", 404, ""},
		{"wrong method on children", "DELETE", "/groups/" + gid + "/children", "", 405, `"HTTP 405 Method Not Allowed"`},
		{"wrong method on members", "POST", "/groups/" + gid + "/members", `{}`, 405, ""},
		{"known but unmodelled method", "POST", "/users", `{"username":"x"}`, 501, ""},
		{"known but unmodelled resource", "GET", "/clients", "", 501, ""},
		{"known group sub-resource", "GET", "/groups/" + gid + "/role-mappings", "", 501, ""},
		{"groups count", "GET", "/groups/count", "", 501, ""},
		{"unmodelled query parameter", "GET", "/groups?q=a:b", "", 501, ""},
		{"non-integer first is a 404 like JAX-RS", "GET", "/groups?first=abc", "", 404, ""},
		{"malformed JSON", "POST", "/groups", `{"name":`, 400, `"Cannot parse the JSON"`},
		{"JSON array", "POST", "/groups", `[]`, 400, `"unknown_error"`},
		{"wrong field type", "POST", "/groups", `{"name":"x","attributes":{"a":"b"}}`, 400, `"Cannot parse the JSON"`},
		{"blank name", "POST", "/groups", `{"name":"  "}`, 400, `{"errorMessage":"Group name is missing"}`},
		{"missing name", "POST", "/groups/" + gid + "/children", `{}`, 400, "Group name is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, _ := h.do(tt.method, tt.path, tt.body)
			if status != tt.want {
				t.Fatalf("HTTP %d %s, want %d", status, body, tt.want)
			}
			if !strings.Contains(string(body), tt.wantBody) {
				t.Errorf("body %s does not contain %s", body, tt.wantBody)
			}
		})
	}
	if got := h.sim.Unimplemented(); len(got) != 5 {
		t.Errorf("Unimplemented() = %v, want 5 entries", got)
	}
}

func TestAllowHeaderOn405(t *testing.T) {
	h := start(t, Options{})
	status, _, hdr := h.do(http.MethodPatch, "/groups", `{}`)
	if status != http.StatusMethodNotAllowed || hdr.Get("Allow") != "GET, POST" {
		t.Fatalf("HTTP %d Allow=%q, want 405 with GET, POST", status, hdr.Get("Allow"))
	}
}

func TestUnknownRealmAndAuth(t *testing.T) {
	h := start(t, Options{})
	tests := []struct {
		name, path, token string
		want              int
		wantBody          string
	}{
		{"no token", "/admin/realms/waldur/groups", "", 401, `{"error":"HTTP 401 Unauthorized"}`},
		{"garbage token", "/admin/realms/waldur/groups", "abc", 401, "HTTP 401 Unauthorized"},
		{"unknown realm", "/admin/realms/nosuch/groups", h.token, 404, `{"error":"Realm not found."}`},
		{"realm", "/admin/realms/waldur", h.token, 200, `"realm":"waldur"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, _ := h.raw(http.MethodGet, tt.path, "", tt.token)
			if status != tt.want || !strings.Contains(string(body), tt.wantBody) {
				t.Fatalf("HTTP %d %s, want %d containing %s", status, body, tt.want, tt.wantBody)
			}
		})
	}
}

func TestUnknownFieldsAndParamsAreIgnoredButRecorded(t *testing.T) {
	h := start(t, Options{})
	status, body, _ := h.do(http.MethodPost, "/groups", `{"name":"a","bogus":1,"realmRoles":["x"]}`)
	if status != http.StatusCreated {
		t.Fatalf("HTTP %d %s", status, body)
	}
	if status, _, _ := h.do(http.MethodGet, "/groups?full=false&briefRepresentation=true", ""); status != http.StatusOK {
		t.Fatalf("HTTP %d", status)
	}
	if diff := cmp.Diff([]string{"POST groups: bogus"}, h.sim.IgnoredFields()); diff != "" {
		t.Errorf("IgnoredFields (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"GET groups: full"}, h.sim.IgnoredQuery()); diff != "" {
		t.Errorf("IgnoredQuery (-want +got):\n%s", diff)
	}
}

func TestRights(t *testing.T) {
	tests := []struct {
		name  string
		roles []string
		want  map[string]int
	}{
		{"manage-users", []string{RoleManageUsers}, map[string]int{"realm": 200, "list": 200, "create": 201, "members": 200}},
		{"realm-admin", []string{RoleRealmAdmin}, map[string]int{"realm": 200, "list": 200, "create": 201, "members": 200}},
		{"view-users", []string{RoleViewUsers}, map[string]int{"realm": 200, "list": 200, "create": 403, "members": 200}},
		{"query-groups", []string{RoleQueryGroups}, map[string]int{"realm": 200, "list": 200, "create": 403, "members": 403}},
		{"no roles", []string{}, map[string]int{"realm": 403, "list": 403, "create": 403, "members": 403}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, Options{})
			gid := h.mkGroup("", "existing")
			h.sim.SetAdminRoles(tt.roles...)
			got := map[string]int{}
			got["realm"], _, _ = h.raw(http.MethodGet, "/admin/realms/waldur", "", h.token)
			got["list"], _, _ = h.do(http.MethodGet, "/groups", "")
			got["create"], _, _ = h.do(http.MethodPost, "/groups", `{"name":"new"}`)
			got["members"], _, _ = h.do(http.MethodGet, "/groups/"+gid+"/members", "")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPathPrefix(t *testing.T) {
	sim := New(Options{PathPrefix: "/auth/"})
	h := &harness{t: t, sim: sim}
	h.srv = httptestServer(t, sim)
	status, body, _ := h.form("/auth/realms/master/protocol/openid-connect/token", map[string][]string{
		"grant_type": {"password"}, "client_id": {"admin-cli"}, "username": {"admin"}, "password": {"admin"},
	})
	if status != http.StatusOK {
		t.Fatalf("token under prefix: HTTP %d %s", status, body)
	}
	if status, _, _ := h.form("/realms/master/protocol/openid-connect/token", nil); status != http.StatusNotFound {
		t.Fatalf("token without prefix: HTTP %d, want 404", status)
	}
}
