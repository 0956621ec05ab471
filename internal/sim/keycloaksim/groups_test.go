package keycloaksim

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tree builds /alpha-one, /beta-alpha/alpha-kid/deep, /c_x/c_x, /cXx.
func tree(h *harness) map[string]string {
	ids := map[string]string{}
	ids["alpha-one"] = h.mkGroup("", "alpha-one")
	ids["beta-alpha"] = h.mkGroup("", "beta-alpha")
	ids["alpha-kid"] = h.mkGroup(ids["beta-alpha"], "alpha-kid")
	ids["deep"] = h.mkGroup(ids["alpha-kid"], "deep")
	ids["c_x"] = h.mkGroup("", "c_x")
	ids["c_x/c_x"] = h.mkGroup(ids["c_x"], "c_x")
	ids["cXx"] = h.mkGroup("", "cXx")
	return ids
}

func TestGroupSearch(t *testing.T) {
	h := start(t, Options{})
	tree(h)
	tests := []struct {
		name  string
		query string
		want  string // roots with nested subGroups, as name(children...)
	}{
		{"top level only without search", "", "alpha-one() beta-alpha() cXx() c_x()"},
		{"substring, case-insensitive, whole tree", "?search=ALPHA", "alpha-one() beta-alpha(alpha-kid())"},
		{"max pages the matches, not the roots", "?search=alpha&max=1", "beta-alpha(alpha-kid())"},
		{"first skips matches", "?search=alpha&first=1", "alpha-one() beta-alpha()"},
		{"path is populated down to a deep match", "?search=deep", "beta-alpha(alpha-kid(deep()))"},
		{"exact is equality, not LIKE", "?search=c_x&exact=true", "c_x(c_x())"},
		{"non-exact search treats _ as a wildcard", "?search=c_x", "cXx() c_x(c_x())"},
		{"exact is case-sensitive", "?search=ALPHA-ONE&exact=true", ""},
		{"no hierarchy returns the matches flat", "?search=alpha&populateHierarchy=false", "alpha-kid() alpha-one() beta-alpha()"},
		{"top level pages with max alone", "?max=2", "alpha-one() beta-alpha()"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, _ := h.do(http.MethodGet, "/groups"+tt.query, "")
			if status != http.StatusOK {
				t.Fatalf("HTTP %d %s", status, body)
			}
			var got []groupOut
			mustJSON(t, body, &got)
			if s := render(got); s != tt.want {
				t.Errorf("got %q, want %q", s, tt.want)
			}
		})
	}
}

func render(gs []groupOut) string {
	parts := []string{}
	for _, g := range gs {
		parts = append(parts, g.Name+"("+render(g.SubGroups)+")")
	}
	return strings.Join(parts, " ")
}

func TestGroupShapes(t *testing.T) {
	h := start(t, Options{})
	ids := tree(h)
	_, body, _ := h.do(http.MethodGet, "/groups?search=alpha-kid&exact=true", "")
	var roots []groupOut
	mustJSON(t, body, &roots)
	kid := roots[0].SubGroups[0]
	if kid.Path != "/beta-alpha/alpha-kid" || kid.ParentID != ids["beta-alpha"] || *kid.SubGroupCount != 1 || *roots[0].SubGroupCount != 1 {
		t.Errorf("search shape: %+v", roots)
	}
	if roots[0].Attributes != nil {
		t.Errorf("brief search must not carry attributes: %s", body)
	}
	_, body, _ = h.do(http.MethodGet, "/groups?subGroupsCount=false", "")
	if strings.Contains(string(body), "subGroupCount") {
		t.Errorf("subGroupsCount=false still counts: %s", body)
	}
	status, body, _ := h.do(http.MethodPost, "/groups/"+ids["alpha-one"]+"/children", `{"name":"n","attributes":{"managed_by":["x"]}}`)
	var created groupOut
	mustJSON(t, body, &created)
	if status != http.StatusCreated || created.SubGroupCount != nil || created.Attributes["managed_by"][0] != "x" || created.Path != "/alpha-one/n" {
		t.Errorf("child create: HTTP %d %s", status, body)
	}
	status, body, hdr := h.do(http.MethodPost, "/groups", `{"name":"top"}`)
	if status != http.StatusCreated || len(body) != 0 || !strings.Contains(hdr.Get("Location"), "/admin/realms/waldur/groups/") {
		t.Errorf("top create: HTTP %d body %q Location %q", status, body, hdr.Get("Location"))
	}
	_, body, _ = h.do(http.MethodGet, "/groups/"+ids["c_x"], "")
	var one groupOut
	mustJSON(t, body, &one)
	if one.Attributes == nil || *one.SubGroupCount != 1 || len(one.SubGroups) != 0 {
		t.Errorf("single read: %s", body)
	}
}

func TestChildren(t *testing.T) {
	tests := []struct {
		name   string
		ignore bool
		query  string
		want   []string
	}{
		{"default max is 10", false, "", []string{"k00", "k01", "k02", "k03", "k04", "k05", "k06", "k07", "k08", "k09"}},
		{"paging", false, "?first=10&max=5", []string{"k10", "k11", "pXa", "p_a"}},
		{"exact is a LIKE: _ matches any character", false, "?search=p_a&exact=true", []string{"pXa", "p_a"}},
		{"exact without wildcards", false, "?search=k03&exact=true", []string{"k03"}},
		{"substring, case-insensitive", false, "?search=K1", []string{"k10", "k11"}},
		{"Keycloak 24.0 ignores search", true, "?search=k03&exact=true&max=3", []string{"k00", "k01", "k02"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, Options{ChildrenSearchIgnored: tt.ignore})
			parent := h.mkGroup("", "parent")
			for _, n := range []string{"k00", "k01", "k02", "k03", "k04", "k05", "k06", "k07", "k08", "k09", "k10", "k11", "p_a", "pXa"} {
				h.mkGroup(parent, n)
			}
			status, body, _ := h.do(http.MethodGet, "/groups/"+parent+"/children"+tt.query, "")
			if status != http.StatusOK {
				t.Fatalf("HTTP %d %s", status, body)
			}
			var got []groupOut
			mustJSON(t, body, &got)
			if diff := cmp.Diff(tt.want, names(got)); diff != "" {
				t.Errorf("children (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCreateConflictsAndLimits(t *testing.T) {
	h := start(t, Options{})
	parent := h.mkGroup("", "p")
	h.mkGroup(parent, "c")
	long := strings.Repeat("é", 256)
	tests := []struct {
		name, path, body string
		want             int
		wantBody         string
	}{
		{"duplicate top level", "/groups", `{"name":"p"}`, 409, `{"errorMessage":"Top level group named 'p' already exists."}`},
		{"duplicate sibling", "/groups/" + parent + "/children", `{"name":"c"}`, 409, "Sibling group named 'c' already exists."},
		{"same name at another level is fine", "/groups/" + parent + "/children", `{"name":"p"}`, 201, ""},
		{"255 characters is fine", "/groups", `{"name":"` + strings.Repeat("é", 255) + `"}`, 201, ""},
		{"256 characters fails in the database", "/groups", `{"name":"` + long + `"}`, 500, "unknown_error"},
		{"unknown parent", "/groups/nosuch/children", `{"name":"x"}`, 404, `{"error":"Could not find group by id"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, _ := h.do(http.MethodPost, tt.path, tt.body)
			if status != tt.want || !strings.Contains(string(body), tt.wantBody) {
				t.Fatalf("HTTP %d %s, want %d %s", status, body, tt.want, tt.wantBody)
			}
		})
	}
	if _, ok := h.sim.GroupID("/" + long); ok {
		t.Error("a rejected name was stored")
	}
}

func TestUpdateGroup(t *testing.T) {
	h := start(t, Options{})
	a, b := h.mkGroup("", "a"), h.mkGroup("", "b")
	if status, body, _ := h.do(http.MethodPut, "/groups/"+a, `{"name":"b"}`); status != 409 {
		t.Fatalf("rename onto sibling: HTTP %d %s", status, body)
	}
	if status, _, _ := h.do(http.MethodPut, "/groups/"+a, `{"id":"`+b+`","name":"z"}`); status != 400 {
		t.Fatalf("id mismatch: HTTP %d", status)
	}
	if status, _, _ := h.do(http.MethodPut, "/groups/"+a, `{"name":"a2","attributes":{"k":["v"]}}`); status != 204 {
		t.Fatalf("rename: HTTP %d", status)
	}
	if got := h.sim.GroupAttributes("/a2"); got["k"][0] != "v" {
		t.Errorf("attributes after update: %v", got)
	}
}

func TestDeleteRemovesSubtreeAndMemberships(t *testing.T) {
	h := start(t, Options{})
	u := h.sim.AddUser("Alice")
	p := h.mkGroup("", "p")
	c := h.mkGroup(p, "c")
	other := h.mkGroup("", "other")
	for _, g := range []string{c, other} {
		if status, _, _ := h.do(http.MethodPut, "/users/"+u.ID+"/groups/"+g, ""); status != 204 {
			t.Fatalf("join: HTTP %d", status)
		}
	}
	if status, _, _ := h.do(http.MethodDelete, "/groups/"+p, ""); status != 204 {
		t.Fatalf("delete: HTTP %d", status)
	}
	want := map[string][]string{"/other": {"alice"}}
	if diff := cmp.Diff(want, h.sim.Groups()); diff != "" {
		t.Errorf("groups after delete (-want +got):\n%s", diff)
	}
	_, body, _ := h.do(http.MethodGet, "/users/"+u.ID+"/groups", "")
	var gs []groupOut
	mustJSON(t, body, &gs)
	if diff := cmp.Diff([]string{"other"}, names(gs)); diff != "" {
		t.Errorf("user groups (-want +got):\n%s", diff)
	}
	for _, path := range []string{"/groups/" + p, "/groups/" + c + "/members"} {
		if status, body, _ := h.do(http.MethodGet, path, ""); status != 404 {
			t.Errorf("GET %s after delete: HTTP %d %s", path, status, body)
		}
	}
	if status, _, _ := h.do(http.MethodDelete, "/groups/"+p, ""); status != 404 {
		t.Errorf("second delete: HTTP %d, want 404", status)
	}
}
