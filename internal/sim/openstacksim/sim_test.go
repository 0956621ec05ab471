package openstacksim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// client speaks raw HTTP to a simulator, to check what the backend's client never sends.
type client struct {
	t       *testing.T
	base    string
	token   string
	project string
}

func start(t *testing.T) (*Server, *client) {
	t.Helper()
	return startWith(t, Options{Users: []string{"alice"}})
}

func startWith(t *testing.T, o Options) (*Server, *client) {
	t.Helper()
	sim := New(o)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	c := &client{t: t, base: srv.URL}
	body := `{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":"admin","domain":{"name":"Default"},
		"password":"secret-admin-password"}}},"scope":{"project":{"name":"admin","domain":{"name":"Default"}}}}}`
	resp := c.do("POST", "/identity/v3/auth/tokens", body, 201)
	c.token = resp.header.Get("X-Subject-Token")
	var tok struct {
		Token struct {
			Project struct{ ID string } `json:"project"`
		} `json:"token"`
	}
	if err := json.Unmarshal(resp.body, &tok); err != nil || c.token == "" {
		t.Fatalf("token: %v %q", err, resp.body)
	}
	c.project = tok.Token.Project.ID
	return sim, c
}

type answer struct {
	header http.Header
	body   []byte
}

func (c *client) do(method, path, body string, want int) answer {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if c.token != "" {
		req.Header.Set("X-Auth-Token", c.token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		c.t.Fatalf("%s %s: HTTP %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	return answer{header: resp.Header, body: b}
}

func (c *client) id(a answer, wrapper string) string {
	var m map[string]map[string]any
	if err := json.Unmarshal(a.body, &m); err != nil {
		c.t.Fatal(err)
	}
	return m[wrapper]["id"].(string)
}

func TestStrictRequestsAreRefused(t *testing.T) {
	_, c := start(t)
	p := c.id(c.do("POST", "/identity/v3/projects", `{"project":{"name":"t1","domain_id":"default","site":"x"}}`, 201), "project")
	cases := []struct {
		name, method, path, body string
		want                     int
	}{
		{"unknown path", "GET", "/network/v2.0/trunks", "", 404},
		{"wrong method", "PATCH", "/network/v2.0/networks", "{}", 405},
		{"unknown network attribute", "POST", "/network/v2.0/networks", `{"network":{"name":"n","bogus":1}}`, 400},
		{"extra top-level key", "POST", "/network/v2.0/networks", `{"network":{"name":"n"},"x":1}`, 400},
		{"unknown filter", "GET", "/network/v2.0/networks?color=red", "", 400},
		{"wrong attribute type", "POST", "/network/v2.0/networks", `{"network":{"name":5}}`, 400},
		{"nova unknown quota", "PUT", "/compute/v2.1/os-quota-sets/" + p, `{"quota_set":{"cores":1,"bogus":1}}`, 400},
		{"cinder force key", "PUT", "/volume/v3/" + c.project + "/os-quota-sets/" + p, `{"quota_set":{"volumes":1,"force":true}}`, 400},
		{"cinder other project in url", "GET", "/volume/v3/" + p + "/os-quota-sets/" + p, "", 400},
		{"neutron unknown quota", "PUT", "/network/v2.0/quotas/" + p, `{"quota":{"trunk":1}}`, 400},
		{"negative quota", "PUT", "/network/v2.0/quotas/" + p, `{"quota":{"network":-2}}`, 400},
		{"project name too long", "POST", "/identity/v3/projects", `{"project":{"name":"` + strings.Repeat("x", 65) + `"}}`, 400},
		{"duplicate project", "POST", "/identity/v3/projects", `{"project":{"name":"t1","domain_id":"default"}}`, 409},
		{"tag with slash", "POST", "/identity/v3/projects", `{"project":{"name":"t2","tags":["a/b"]}}`, 400},
		{"subnet of missing network", "POST", "/network/v2.0/subnets", `{"subnet":{"network_id":"nope","cidr":"10.0.0.0/24","ip_version":4}}`, 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			c.do(tc.method, tc.path, tc.body, tc.want)
		})
	}
	c.t = t
	c.token = ""
	c.do("GET", "/network/v2.0/networks", "", 401)
	c.token = "forged"
	c.do("GET", "/identity/v3/projects", "", 401)
}

func TestUsageMovesAndLimitsAreEnforced(t *testing.T) {
	sim, c := start(t)
	p := c.id(c.do("POST", "/identity/v3/projects", `{"project":{"name":"t1"}}`, 201), "project")
	c.do("PUT", "/network/v2.0/quotas/"+p, `{"quota":{"network":2}}`, 200)
	n := c.id(c.do("POST", "/network/v2.0/networks", `{"network":{"name":"a","project_id":"`+p+`"}}`, 201), "network")
	c.do("POST", "/network/v2.0/networks", `{"network":{"name":"b","project_id":"`+p+`"}}`, 201)
	c.do("POST", "/network/v2.0/networks", `{"network":{"name":"c","project_id":"`+p+`"}}`, 409)
	var d struct {
		Quota map[string]struct{ Limit, Used int } `json:"quota"`
	}
	_ = json.Unmarshal(c.do("GET", "/network/v2.0/quotas/"+p+"/details.json", "", 200).body, &d)
	if d.Quota["network"].Used != 2 || d.Quota["security_group"].Used != 1 || d.Quota["security_group_rule"].Used != 4 {
		t.Fatalf("neutron usage: %+v (a project's default group appears on first use)", d.Quota)
	}
	// Neutron accepts limits below usage; Nova refuses them unless forced; Cinder always.
	c.do("PUT", "/network/v2.0/quotas/"+p, `{"quota":{"network":0}}`, 200)
	sim.AddServer(p, 4, 1024)
	sim.AddVolume(p, 10)
	c.do("PUT", "/compute/v2.1/os-quota-sets/"+p, `{"quota_set":{"cores":2}}`, 400)
	c.do("PUT", "/compute/v2.1/os-quota-sets/"+p, `{"quota_set":{"cores":0,"force":true}}`, 200)
	c.do("PUT", "/volume/v3/"+c.project+"/os-quota-sets/"+p, `{"quota_set":{"gigabytes":5}}`, 400)
	var u struct {
		QuotaSet map[string]json.RawMessage `json:"quota_set"`
	}
	_ = json.Unmarshal(c.do("GET", "/volume/v3/"+c.project+"/os-quota-sets/"+p+"?usage=true", "", 200).body, &u)
	if !strings.Contains(string(u.QuotaSet["gigabytes"]), `"in_use":10`) {
		t.Fatalf("cinder usage: %s", u.QuotaSet["gigabytes"])
	}
	// Objects in use cannot be deleted.
	sn := c.id(c.do("POST", "/network/v2.0/subnets", `{"subnet":{"network_id":"`+n+`","cidr":"10.1.0.0/24","ip_version":4}}`, 201), "subnet")
	r := c.id(c.do("POST", "/network/v2.0/routers", `{"router":{"name":"r","project_id":"`+p+`"}}`, 201), "router")
	c.do("PUT", "/network/v2.0/routers/"+r+"/add_router_interface", `{"subnet_id":"`+sn+`"}`, 200)
	c.do("PUT", "/network/v2.0/routers/"+r+"/add_router_interface", `{"subnet_id":"`+sn+`"}`, 400)
	c.do("DELETE", "/network/v2.0/routers/"+r, "", 409)
	c.do("DELETE", "/network/v2.0/subnets/"+sn, "", 409)
	c.do("DELETE", "/network/v2.0/networks/"+n, "", 409)
	c.do("PUT", "/network/v2.0/routers/"+r+"/remove_router_interface", `{"subnet_id":"`+sn+`"}`, 200)
	c.do("DELETE", "/network/v2.0/routers/"+r, "", 204)
	c.do("DELETE", "/network/v2.0/networks/"+n, "", 204)
	if o := sim.ObjectsOf(p); o.Networks != 1 || o.Subnets != 0 || o.Routers != 0 || o.Ports != 0 {
		t.Fatalf("after deletes: %+v", o)
	}
}

func TestFaultsAndCalls(t *testing.T) {
	sim, c := start(t)
	sim.FailNext("neutron GET /v2.0/networks", 1, Fault503)
	c.do("GET", "/network/v2.0/networks", "", 503)
	c.do("GET", "/network/v2.0/networks", "", 200)
	if got := sim.Calls()["neutron GET /v2.0/networks"]; got != 2 {
		t.Fatalf("calls = %d", got)
	}
	sim.FailNext("neutron POST /v2.0/networks", 1, FaultLoseResponse)
	req, _ := http.NewRequest("POST", c.base+"/network/v2.0/networks", strings.NewReader(`{"network":{"name":"lost"}}`))
	req.Header.Set("X-Auth-Token", c.token)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("a lost response must reach the client as a connection error")
	}
	if o := sim.ObjectsOf(c.project); o.Networks != 2 { // public + lost
		t.Fatalf("the lost request was not applied: %+v", o)
	}
	if log := sim.FaultLog(); len(log) != 2 || log[1] != "neutron POST /v2.0/networks:lose-response" {
		t.Fatalf("fault log: %v", log)
	}
	for _, op := range sim.Operations() {
		if strings.Count(op, " ") != 2 {
			t.Errorf("operation name %q is not '<service> <METHOD> <path>'", op)
		}
	}
}

// What tenants leave behind is refused where the real services refuse it.
func TestLeftoversAreDeletedOnlyAsTheServicesAllow(t *testing.T) {
	sim, c := start(t)
	p := c.id(c.do("POST", "/identity/v3/projects", `{"project":{"name":"t1"}}`, 201), "project")
	cv := "/volume/v3/" + c.project
	srv := sim.AddServer(p, 1, 512)
	vol := sim.AddVolume(p, 5)
	sim.AttachVolume(vol, srv)
	snap := sim.AddSnapshot(vol)
	full := sim.AddBackup(vol, "")
	sim.AddBackup(vol, full)
	force := `{"os-force_delete":{}}`
	c.do("POST", cv+"/volumes/"+vol+"/action", force, 400) // attached
	c.do("DELETE", "/compute/v2.1/servers/"+srv, "", 204)
	c.do("POST", cv+"/volumes/"+vol+"/action", force, 400) // has a snapshot
	c.do("GET", cv+"/snapshots/detail?project_id="+p, "", 400)
	c.do("GET", cv+"/snapshots/detail?all_tenants=1&project_id="+p+"&name=x", "", 400)
	c.do("POST", cv+"/snapshots/"+snap+"/action", force, 202)
	c.do("POST", cv+"/volumes/"+vol+"/action", force, 202)
	c.do("POST", cv+"/backups/"+full+"/action", force, 400) // an incremental backup depends on it
	var bl struct {
		Backups []struct {
			ID        string `json:"id"`
			Dependent bool   `json:"has_dependent_backups"`
		} `json:"backups"`
	}
	_ = json.Unmarshal(c.do("GET", cv+"/backups/detail?all_tenants=true&project_id="+p, "", 200).body, &bl)
	if len(bl.Backups) != 2 {
		t.Fatalf("backups: %+v", bl)
	}
	img := sim.AddImage(p, "private", true)
	c.do("DELETE", "/image/v2/images/"+img, "", 403)
	c.do("PATCH", "/image/v2/images/"+img, `[{"op":"replace","path":"/protected","value":false}]`, 415) // JSON-patch media type only
	lb := sim.AddLoadBalancer(p, 1)
	c.do("DELETE", "/load-balancer/v2.0/lbaas/loadbalancers/"+lb, "", 400)
	sim.SetAsyncDeletes(true)
	c.do("DELETE", "/load-balancer/v2.0/lbaas/loadbalancers/"+lb+"?cascade=true", "", 204)
	c.do("DELETE", "/load-balancer/v2.0/lbaas/loadbalancers/"+lb+"?cascade=true", "", 409) // PENDING_DELETE
	sim.CompleteDeletes()
	c.do("DELETE", "/load-balancer/v2.0/lbaas/loadbalancers/"+lb+"?cascade=true", "", 404)
	sim.AddServerGroup(p)
	var groups struct {
		Groups []map[string]any `json:"server_groups"`
	}
	_ = json.Unmarshal(c.do("GET", "/compute/v2.1/os-server-groups?all_projects=True", "", 200).body, &groups)
	if len(groups.Groups) != 1 || groups.Groups[0]["project_id"] != nil {
		t.Fatalf("server groups at microversion 2.1 (no project_id before 2.13): %v", groups.Groups)
	}
	c.do("GET", "/compute/v2.1/os-server-groups?all_projects=True&project_id="+p, "", 400)
	if o := sim.ObjectsOf(p); o.Servers != 0 || o.Volumes != 0 || o.Snapshots != 0 || o.Backups != 2 || o.Images != 1 || o.ServerGroups != 1 || o.LoadBalancers != 0 {
		t.Fatalf("objects: %+v", o)
	}
}
