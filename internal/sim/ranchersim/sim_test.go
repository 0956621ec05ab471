package ranchersim

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

func TestMain(m *testing.M) { os.Exit(kubeenv.Main(m)) }

const cluster = "c-m-sim00001"

type client struct {
	t    *testing.T
	base string
	auth string
	hc   *http.Client // default http.DefaultClient
}

func newSim(t *testing.T, o Options) (*Server, *client) {
	t.Helper()
	s := New(o)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, &client{t: t, base: srv.URL, auth: "Bearer " + s.Token()}
}

// do sends a request and decodes a JSON answer.
func (c *client) do(method, path, body string) (int, map[string]any, http.Header) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	req.Header.Set("Content-Type", "application/json")
	hc := c.hc
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out, resp.Header
}

func TestAuthentication(t *testing.T) {
	s, c := newSim(t, Options{})
	cases := []struct {
		name, auth string
		want       int
	}{
		{"bearer access:secret", "Bearer " + s.Token(), 200},
		{"basic", "Basic " + base64.StdEncoding.EncodeToString([]byte(s.Token())), 200},
		{"wrong secret", "Bearer token-sim01:nope", 401},
		{"basic wrong", "Basic " + base64.StdEncoding.EncodeToString([]byte("token-sim01:nope")), 401},
		{"access key only", "Bearer token-sim01", 401},
		{"none", "", 401},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.auth = tc.auth
			code, body, _ := c.do("GET", "/v3/clusters/"+cluster, "")
			if code != tc.want {
				t.Fatalf("status %d, want %d (%v)", code, tc.want, body)
			}
			if code == 401 && body["code"] != "Unauthorized" {
				t.Fatalf("401 body %v", body)
			}
		})
	}
}

func TestRoutingStrictness(t *testing.T) {
	_, c := newSim(t, Options{})
	cases := []struct {
		method, path string
		want         int
		code         string
	}{
		{"GET", "/v3/nothing", 404, "NotFound"},
		{"GET", "/v4/projects", 404, "NotFound"},
		{"GET", "/v3/clusters/c-m-unknown", 404, "NotFound"},
		{"PATCH", "/v3/clusters/" + cluster, 405, "MethodNotAllow"},
		{"PUT", "/v3/projectroletemplatebindings/p-x:prtb-y", 405, "MethodNotAllow"},
		{"PATCH", "/v3/projects", 405, "MethodNotAllow"},
		{"GET", "/k8s/clusters/c-m-unknown/api", 404, "NotFound"},
		{"GET", "/k8s/clusters/" + cluster + "/api", 503, "ClusterUnavailable"}, // no upstream in this test
	}
	for _, tc := range cases {
		code, body, hdr := c.do(tc.method, tc.path, "")
		if code != tc.want || body["code"] != tc.code {
			t.Errorf("%s %s: %d %v, want %d %s", tc.method, tc.path, code, body, tc.want, tc.code)
		}
		if code == 405 && hdr.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", tc.method, tc.path)
		}
	}
}

func TestRootAndSchemas(t *testing.T) {
	_, c := newSim(t, Options{})
	code, _, hdr := c.do("GET", "/v3", "")
	if code != 200 || hdr.Get("X-API-Schemas") != c.base+"/v3/schemas" {
		t.Fatalf("root: %d %v", code, hdr)
	}
	code, body, _ := c.do("GET", "/v3/schemas", "")
	if code != 200 {
		t.Fatal(code)
	}
	var ids []string
	for _, d := range body["data"].([]any) {
		s := d.(map[string]any)
		ids = append(ids, s["id"].(string))
		if s["links"].(map[string]any)["collection"] == nil {
			t.Errorf("schema %s has no collection link", s["id"])
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"cluster", "clusterRegistrationToken", "project", "projectRoleTemplateBinding", "token"}) {
		t.Fatalf("schemas %v", ids)
	}
}

func TestProjectValidation(t *testing.T) {
	s, c := newSim(t, Options{})
	cases := []struct {
		name, body, code, field string
	}{
		{"malformed", `{"name":`, "InvalidBodyContent", ""},
		{"not an object", `[1]`, "InvalidBodyContent", ""},
		{"no name", `{"clusterId":"` + cluster + `"}`, "MissingRequired", "name"},
		{"no cluster", `{"name":"x"}`, "MissingRequired", "clusterId"},
		{"unknown cluster", `{"name":"x","clusterId":"c-m-nope"}`, "InvalidReference", "clusterId"},
		{"annotation not a string", `{"name":"x","clusterId":"` + cluster + `","annotations":{"a":1}}`, "InvalidFormat", "annotations"},
		{"name not a string", `{"name":5,"clusterId":"` + cluster + `"}`, "InvalidFormat", "name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := c.do("POST", "/v3/projects", tc.body)
			if code != 422 || body["code"] != tc.code || (tc.field != "" && body["fieldName"] != tc.field) {
				t.Fatalf("%d %v, want 422 %s %s", code, body, tc.code, tc.field)
			}
		})
	}
	if len(s.Projects()) != 0 {
		t.Fatal("an invalid request created a project")
	}
	code, body, _ := c.do("POST", "/v3/projects", `{"type":"project","name":"ok","clusterId":"`+cluster+`","colour":"blue"}`)
	if code != 201 || !strings.HasPrefix(body["id"].(string), cluster+":p-") {
		t.Fatalf("create: %d %v", code, body)
	}
	if v := s.Violations(); len(v) != 1 || !strings.Contains(v[0], `"colour"`) {
		t.Fatalf("unknown fields are ignored like norman does, but recorded: %v", v)
	}
}

func TestListsFiltersAndPages(t *testing.T) {
	s, c := newSim(t, Options{PageSize: 2})
	for _, n := range []string{"a", "b", "c", "a"} { // duplicate names are allowed, as in Rancher
		if code, body, _ := c.do("POST", "/v3/projects", `{"name":"`+n+`","clusterId":"`+cluster+`"}`); code != 201 {
			t.Fatalf("%d %v", code, body)
		}
	}
	_, body, _ := c.do("GET", "/v3/projects?clusterId="+cluster+"&name=a", "")
	if n := len(body["data"].([]any)); n != 2 {
		t.Fatalf("name filter: %d", n)
	}
	_, body, _ = c.do("GET", "/v3/projects?limit=-1", "")
	// the four, and the cluster's Default and System projects (removal.go)
	if n := len(body["data"].([]any)); n != 6 || body["pagination"].(map[string]any)["next"] != nil {
		t.Fatalf("limit=-1: %d %v", n, body["pagination"])
	}
	var seen int
	next := "/v3/projects"
	for pages := 0; next != ""; pages++ {
		_, body, _ = c.do("GET", next, "")
		seen += len(body["data"].([]any))
		n, _ := body["pagination"].(map[string]any)["next"].(string)
		next = strings.TrimPrefix(n, c.base)
		if pages > 3 {
			t.Fatal("pagination does not end")
		}
	}
	if seen != 6 {
		t.Fatalf("pages gave %d projects", seen)
	}
	c.do("GET", "/v3/projects?clusterID="+cluster, "")
	if v := s.Violations(); len(v) != 1 || !strings.Contains(v[0], `unknown filter "clusterID"`) {
		t.Fatalf("violations %v", v)
	}
}

func TestBindingValidation(t *testing.T) {
	s, c := newSim(t, Options{})
	_, p, _ := c.do("POST", "/v3/projects", `{"name":"p","clusterId":"`+cluster+`"}`)
	pid := p["id"].(string)
	principal := "keycloakoidc_group://project_x_workloads-manage"
	cases := []struct{ name, body, code, field string }{
		{"unknown role", `{"projectId":"` + pid + `","roleTemplateId":"god","groupPrincipalId":"` + principal + `"}`, "InvalidReference", "roleTemplateId"},
		{"unknown project", `{"projectId":"` + cluster + `:p-nope1","roleTemplateId":"workloads-manage","groupPrincipalId":"` + principal + `"}`,
			"InvalidReference", "projectId"},
		{"no subject", `{"projectId":"` + pid + `","roleTemplateId":"workloads-manage"}`, "MissingRequired", "groupPrincipalId"},
		{"two subjects", `{"projectId":"` + pid + `","roleTemplateId":"workloads-manage","userId":"u-1","groupPrincipalId":"g"}`,
			"MissingRequired", "groupPrincipalId"},
	}
	for _, tc := range cases {
		code, body, _ := c.do("POST", "/v3/projectroletemplatebindings", tc.body)
		if code != 422 || body["code"] != tc.code || body["fieldName"] != tc.field {
			t.Errorf("%s: %d %v", tc.name, code, body)
		}
	}
	code, body, _ := c.do("POST", "/v3/projectroletemplatebindings",
		`{"type":"projectRoleTemplateBinding","projectId":"`+pid+`","roleTemplateId":"workloads-manage","groupPrincipalId":"`+principal+`"}`)
	if code != 201 || !strings.HasPrefix(body["id"].(string), strings.SplitN(pid, ":", 2)[1]+":prtb-") {
		t.Fatalf("create: %d %v", code, body)
	}
	_, list, _ := c.do("GET", "/v3/projectroletemplatebindings?groupPrincipalId="+url.QueryEscape(principal), "")
	if len(list["data"].([]any)) != 1 {
		t.Fatalf("filter by principal: %v", list)
	}
	if code, _, _ := c.do("DELETE", "/v3/projects/"+pid, ""); code != 200 {
		t.Fatalf("delete project: %d", code)
	}
	if len(s.Bindings()) != 0 {
		t.Fatal("bindings outlive their project")
	}
}

// Deleting a binding or a project only starts its removal, as in Rancher v2.12.0: both stay
// listed, with `removed` (and the project as "removing"), for RemoveDelay, then are gone — the
// project with its bindings. The creator of a project gets a project-owner binding; every
// cluster has a Default and a System project.
func TestRemovalTakesAWhile(t *testing.T) {
	const delay = 300 * time.Millisecond
	s, c := newSim(t, Options{RemoveDelay: delay})
	_, p, _ := c.do("POST", "/v3/projects", `{"name":"p","clusterId":"`+cluster+`"}`)
	pid := p["id"].(string)
	_, list, _ := c.do("GET", "/v3/projectroletemplatebindings?projectId="+url.QueryEscape(pid), "")
	if d := list["data"].([]any); len(d) != 1 || d[0].(map[string]any)["roleTemplateId"] != "project-owner" || d[0].(map[string]any)["userId"] != simUserID {
		t.Fatalf("the creator's binding: %v", list["data"])
	}
	_, b, _ := c.do("POST", "/v3/projectroletemplatebindings",
		`{"projectId":"`+pid+`","roleTemplateId":"workloads-manage","groupPrincipalId":"keycloakoidc_group://g"}`)
	bid := b["id"].(string)
	if code, out, _ := c.do("DELETE", "/v3/projectroletemplatebindings/"+bid, ""); code != 200 || out["removed"] == nil {
		t.Fatalf("delete binding: %d %v", code, out)
	}
	_, list, _ = c.do("GET", "/v3/projectroletemplatebindings?groupPrincipalId=keycloakoidc_group://g", "")
	if d := list["data"].([]any); len(d) != 1 || d[0].(map[string]any)["removed"] == nil || d[0].(map[string]any)["state"] != nil {
		t.Fatalf("a binding being deleted is listed with removed (and no state): %v", list["data"])
	}
	if code, out, _ := c.do("DELETE", "/v3/projects/"+pid, ""); code != 200 || out["state"] != "removing" {
		t.Fatalf("delete project: %d %v", code, out)
	}
	if code, out, _ := c.do("GET", "/v3/projects/"+pid, ""); code != 200 || out["state"] != "removing" || out["removed"] == nil {
		t.Fatalf("a project being deleted: %d %v", code, out)
	}
	if len(s.Projects()) != 0 || len(s.Bindings()) != 0 {
		t.Fatalf("the inspectors show what is being deleted: %v %v", s.Projects(), s.Bindings())
	}
	time.Sleep(delay + 50*time.Millisecond)
	if code, _, _ := c.do("GET", "/v3/projects/"+pid, ""); code != 404 {
		t.Fatalf("the project after its removal: %d", code)
	}
	_, list, _ = c.do("GET", "/v3/projectroletemplatebindings", "")
	if d := list["data"].([]any); len(d) != 0 {
		t.Fatalf("bindings after the project's removal: %v", d)
	}
	_, list, _ = c.do("GET", "/v3/projects?clusterId="+cluster, "")
	var names []string
	for _, d := range list["data"].([]any) {
		names = append(names, d.(map[string]any)["name"].(string))
	}
	if !slices.Equal(names, []string{"Default", "System"}) && !slices.Equal(names, []string{"System", "Default"}) {
		t.Fatalf("the cluster's own projects: %v", names)
	}
}

func TestFaultsAreDeterministic(t *testing.T) {
	run := func() []string {
		s, c := newSim(t, Options{})
		s.SetFaults(Faults{Rate: 0.5, Seed: 3, Kinds: []FaultKind{Fault500, Fault503}, Operations: []string{"cluster.*"}})
		for i := 0; i < 20; i++ {
			c.do("GET", "/v3/clusters/"+cluster, "")
			c.do("GET", "/v3/projects", "") // not selected: never fails
		}
		if calls := s.Calls(); calls["cluster.get"] != 20 || calls["projects.list"] != 20 {
			t.Fatalf("calls %v", calls)
		}
		return s.FaultLog()
	}
	a, b := run(), run()
	if !slices.Equal(a, b) || len(a) < 3 || len(a) > 17 {
		t.Fatalf("fault logs differ or are implausible: %v / %v", a, b)
	}
	for _, f := range a {
		if !strings.HasPrefix(f, "cluster.get:") {
			t.Fatalf("fault outside the selected ops: %s", f)
		}
	}
}

func TestLostResponseIsApplied(t *testing.T) {
	s, c := newSim(t, Options{})
	s.FailNext("project.create", 1, FaultLoseResponse)
	req, _ := http.NewRequest("POST", c.base+"/v3/projects", strings.NewReader(`{"name":"x","clusterId":"`+cluster+`"}`))
	req.Header.Set("Authorization", c.auth)
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("the response should have been lost")
	}
	if len(s.Projects()) != 1 {
		t.Fatal("the request was not applied")
	}
	if log := s.FaultLog(); !slices.Equal(log, []string{"project.create:lose-response"}) {
		t.Fatalf("fault log %v", log)
	}
}
