package keycloaksim

import (
	"encoding/base64"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Servers before 23.0 have no GET groups/{id}/children (405: only POST serves the path) and put
// the whole subtree into group representations; before 20.0 GET groups ignores exact.
func TestVersionDifferences(t *testing.T) {
	type subGroups struct {
		Name          string      `json:"name"`
		SubGroupCount *int        `json:"subGroupCount"`
		SubGroups     []subGroups `json:"subGroups"`
	}
	for _, tc := range []struct {
		version                  string
		children                 int
		inline, exactIgnored     bool
		serverInfoVersion        string
		topLevelWithExactMatches int
	}{
		{"", http.StatusOK, false, false, DefaultVersion, 1},
		{"24.0.5", http.StatusOK, false, false, "24.0.5", 1},
		{"22.0.5", http.StatusMethodNotAllowed, true, false, "22.0.5", 1},
		{"19.0.3", http.StatusMethodNotAllowed, true, true, "19.0.3", 2},
	} {
		t.Run("v"+tc.serverInfoVersion, func(t *testing.T) {
			h := start(t, Options{Version: tc.version})
			pid := h.mkGroup("", "c_abc")
			h.mkGroup(pid, "project_x_role")
			h.mkGroup("", "c_abcd") // a substring match of c_abc
			status, body, hdr := h.do(http.MethodGet, "/groups/"+pid+"/children", "")
			if status != tc.children {
				t.Fatalf("children: HTTP %d %s", status, body)
			}
			if status == http.StatusMethodNotAllowed && !strings.Contains(hdr.Get("Allow"), "POST") {
				t.Errorf("405 without Allow: POST: %v", hdr)
			}
			var g subGroups
			_, body, _ = h.do(http.MethodGet, "/groups/"+pid, "")
			mustJSON(t, body, &g)
			if inline := len(g.SubGroups) == 1 && g.SubGroups[0].Name == "project_x_role"; inline != tc.inline || inline == (g.SubGroupCount != nil) {
				t.Errorf("group representation: %s", body)
			}
			var roots []subGroups
			_, body, _ = h.do(http.MethodGet, "/groups?search=c_abc&exact=true&first=0&max=10", "")
			mustJSON(t, body, &roots)
			if len(roots) != tc.topLevelWithExactMatches {
				t.Errorf("exact search (ignored: %v): %s", tc.exactIgnored, body)
			}
			var info struct {
				SystemInfo struct{ Version string } `json:"systemInfo"`
			}
			status, body, _ = h.raw(http.MethodGet, "/admin/serverinfo", "", h.token)
			mustJSON(t, body, &info)
			if status != http.StatusOK || info.SystemInfo.Version != tc.serverInfoVersion {
				t.Errorf("serverinfo: HTTP %d %s", status, body)
			}
		})
	}
}

// Access tokens carry the admin's roles for the realm's admin client (composites expanded),
// unless lightweight tokens are on; serverinfo needs some admin role.
func TestTokenRoleClaims(t *testing.T) {
	claims := func(tok string) string {
		parts := strings.Split(tok, ".")
		data, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	h := start(t, Options{Admin: &Admin{Username: "admin", Password: "admin", Roles: []string{RoleRealmAdmin}}})
	var c struct {
		ResourceAccess map[string]struct{ Roles []string } `json:"resource_access"`
	}
	mustJSON(t, []byte(claims(h.token)), &c)
	if r := c.ResourceAccess["waldur-realm"].Roles; !slices.Contains(r, RoleManageUsers) || !slices.Contains(r, RoleRealmAdmin) {
		t.Fatalf("master admin token: %s", claims(h.token))
	}
	light := start(t, Options{LightweightTokens: true})
	if strings.Contains(claims(light.token), "resource_access") {
		t.Fatalf("lightweight token: %s", claims(light.token))
	}
	light.sim.SetAdminRoles()
	if status, _, _ := light.raw(http.MethodGet, "/admin/serverinfo", "", light.token); status != http.StatusForbidden {
		t.Fatalf("serverinfo without any admin role: HTTP %d", status)
	}
}
