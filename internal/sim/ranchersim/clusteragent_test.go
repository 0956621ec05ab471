package ranchersim

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// provCluster creates a v1 provisioning cluster (with or without rkeConfig) and a registration
// token for it; it returns the management id and the token.
func provClusterWithToken(t *testing.T, c *client, name string, rkeConfig bool) (string, string) {
	t.Helper()
	spec := `{"kubernetesVersion":"v1.31.7+rke2r1"}`
	if rkeConfig {
		spec = `{"kubernetesVersion":"v1.31.7+rke2r1","rkeConfig":{}}`
	}
	code, body, _ := c.do("POST", "/v1/provisioning.cattle.io.clusters/fleet-default", `{"metadata":{"name":"`+name+`"},"spec":`+spec+`}`)
	if code != 201 {
		t.Fatalf("create %s: %d %v", name, code, body)
	}
	cid := managementID(t, c, name)
	return cid, postToken(t, c, cid)["token"].(string)
}

// managementID waits for the management cluster of a provisioning cluster: Rancher names it a
// moment after the create (controllers.go).
func managementID(t *testing.T, c *client, name string) string {
	t.Helper()
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		_, got, _ := c.do("GET", "/v1/provisioning.cattle.io.clusters/fleet-default/"+name, "")
		if cid, _ := got["status"].(map[string]any)["clusterName"].(string); cid != "" {
			return cid
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("no management cluster for %s: %v", name, got)
		}
	}
}

func nodeStates(s *Server, cid string) map[string]string {
	out := map[string]string{}
	for _, n := range s.Nodes() {
		if n.ClusterID == cid {
			out[n.Name] = n.State + " " + n.Labels["role"] + " " + n.Labels["stage"]
		}
	}
	return out
}

// TestClusterAgentNodes: an imported cluster's agent reports its Nodes; Rancher shows them as
// v3 nodes (registering, then active; NotReady unavailable), keeps labels set through the API,
// drops nodes the agent no longer reports, and deletes through the API like any node. Wrong
// tokens, provisioned clusters and system-agent registrations into imported clusters are refused.
func TestClusterAgentNodes(t *testing.T) {
	s, c := newSim(t, Options{Seed: 4, NodeActiveAfter: 30 * time.Millisecond})
	cid, token := provClusterWithToken(t, c, "imported", false)
	provID, provToken := provClusterWithToken(t, c, "provisioned", true)
	agent := &client{t: t, base: c.base, auth: "Bearer " + token}
	report := func(a *client, body string) int { code, _, _ := a.do("POST", ClusterAgentEndpoint, body); return code }
	two := `{"nodes":[{"nodeName":"n-server-0","ready":true,"labels":{"role":"server"},"roles":["etcd","controlplane"]},
		{"nodeName":"n-agent-0","ready":true,"labels":{"role":"agent"},"roles":["worker"]}]}`
	if code := report(agent, two); code != 204 {
		t.Fatalf("report: %d", code)
	}
	if got := nodeStates(s, cid); got["n-server-0"] != "registering server " || len(got) != 2 {
		t.Fatalf("after the first report: %v", got)
	}
	time.Sleep(40 * time.Millisecond)
	if got := nodeStates(s, cid); got["n-agent-0"] != "active agent " {
		t.Fatalf("nodes %v", got)
	}
	if code, body, _ := c.do("GET", "/v1/provisioning.cattle.io.clusters/fleet-default/imported", ""); code != 200 || body["status"].(map[string]any)["ready"] != true {
		t.Fatalf("the imported cluster is not ready: %v", body)
	}
	var agentID string
	for _, n := range s.Nodes() {
		if n.Name == "n-agent-0" {
			agentID = n.ID
		}
	}
	if code, _, _ := c.do("PUT", "/v3/nodes/"+agentID, `{"labels":{"role":"agent","stage":"remove"}}`); code != 200 {
		t.Fatal("label update refused")
	}
	notReady := strings.Replace(two, `"nodeName":"n-agent-0","ready":true,"labels":{"role":"agent"}`,
		`"nodeName":"n-agent-0","ready":false,"labels":{"role":"agent","stage":"install"}`, 1) // the Node's own label
	if code := report(agent, notReady); code != 204 {
		t.Fatal(code)
	}
	if got := nodeStates(s, cid); got["n-agent-0"] != "unavailable agent remove" {
		t.Fatalf("a NotReady node with an API label: %v", got)
	}
	if code := report(agent, `{"nodes":[{"nodeName":"n-server-0","ready":true,"labels":{"role":"server"}}]}`); code != 204 {
		t.Fatal(code)
	}
	if got := nodeStates(s, cid); len(got) != 1 {
		t.Fatalf("a node the agent no longer reports stays: %v", got)
	}
	for _, tc := range []struct {
		who  *client
		body string
		want int
	}{
		{&client{t: t, base: c.base, auth: "Bearer wrong"}, two, 401},
		{&client{t: t, base: c.base, auth: "Bearer " + provToken}, two, 409},
		{agent, `{"nodes":[{"nodeName":"Bad_Name","ready":true}]}`, 422},
		{agent, `{"nodes":"n-1"}`, 422},
	} {
		if code := report(tc.who, tc.body); code != tc.want {
			t.Errorf("report %s: %d, want %d", tc.body, code, tc.want)
		}
	}
	sys := func(tok string) int {
		code, _, _ := (&client{t: t, base: c.base, auth: "Bearer " + tok}).do("POST", RegisterEndpoint, `{"nodeName":"m-1","roles":["worker"]}`)
		return code
	}
	if code := sys(token); code != 409 {
		t.Errorf("system-agent registration into the imported cluster: %d", code)
	}
	if code := sys(provToken); code != 201 || len(nodeStates(s, provID)) != 1 {
		t.Errorf("system-agent registration into the provisioned cluster: %d", code)
	}
	if code, _, _ := c.do("GET", ClusterAgentEndpoint, ""); code != 405 {
		t.Errorf("GET on the agent endpoint: %d", code)
	}
}

// TestNodeListWhileAgentReports: a node list is encoded after s.mu is released while cluster
// agent reports write the same node's labels; under -race this failed while the list carried
// the live labels map (nonNil returned it instead of a copy).
func TestNodeListWhileAgentReports(t *testing.T) {
	_, c := newSim(t, Options{})
	cid, token := provClusterWithToken(t, c, "racing", false)
	report := func(i int) error { // nil when the report was taken (204)
		body := fmt.Sprintf(`{"nodes":[{"nodeName":"n-0","ready":true,"labels":{"gen":"%d"},"roles":["worker"]}]}`, i)
		req, _ := http.NewRequest(http.MethodPost, c.base+ClusterAgentEndpoint, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	if err := report(0); err != nil {
		t.Fatalf("first report: %v", err)
	}
	const rounds = 200
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= rounds; i++ {
			if err := report(i); err != nil {
				t.Errorf("report %d: %v", i, err)
				return
			}
		}
	}()
	for range rounds {
		if code, body, _ := c.do("GET", "/v3/nodes?clusterId="+cid, ""); code != http.StatusOK || len(body["data"].([]any)) != 1 {
			t.Fatalf("node list: %d %v", code, body)
		}
	}
	<-done
}

// TestSystemAgentInstaller: /system-agent-install.sh is served without authentication once a
// script is set (404 before), GET only.
func TestSystemAgentInstaller(t *testing.T) {
	s, c := newSim(t, Options{})
	c.auth = ""
	if code, _, _ := c.do(http.MethodGet, SystemAgentInstallPath, ""); code != http.StatusNotFound {
		t.Fatalf("without a script: %d", code)
	}
	s.SetSystemAgentInstaller([]byte("#!/bin/sh\necho installed\n"))
	resp, err := http.Get(c.base + SystemAgentInstallPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "#!/bin/sh\necho installed\n" {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	if code, _, _ := c.do(http.MethodPost, SystemAgentInstallPath, ""); code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", code)
	}
}

// A v1 list with ?limit pages as Steve does: a continue token and pagination.next, which reads
// the rest; an unknown token is refused.
func TestProvisioningListPages(t *testing.T) {
	_, c := newSim(t, Options{})
	for _, name := range []string{"pa", "pb", "pc"} {
		if code, body, _ := c.do("POST", "/v1/provisioning.cattle.io.clusters/fleet-default", `{"metadata":{"name":"`+name+`"},"spec":{"kubernetesVersion":"v1.31.7+rke2r1"}}`); code != 201 {
			t.Fatalf("create %s: %d %v", name, code, body)
		}
	}
	var got []string
	path := "/v1/provisioning.cattle.io.clusters/fleet-default?limit=2"
	for pages := 0; path != ""; pages++ {
		if pages == 3 {
			t.Fatalf("more than 2 pages: %v", got)
		}
		code, body, _ := c.do("GET", path, "")
		if code != 200 {
			t.Fatalf("GET %s: %d %v", path, code, body)
		}
		for _, it := range body["data"].([]any) {
			got = append(got, it.(map[string]any)["metadata"].(map[string]any)["name"].(string))
		}
		page, _ := body["pagination"].(map[string]any)
		next, _ := page["next"].(string)
		path = strings.TrimPrefix(next, c.base)
		if pages == 0 && (page["partial"] != true || body["continue"] == nil || next == "") {
			t.Fatalf("first page: %v", body)
		}
	}
	if strings.Join(got, ",") != "pa,pb,pc" {
		t.Errorf("pages gave %v", got)
	}
	if code, body, _ := c.do("GET", "/v1/provisioning.cattle.io.clusters/fleet-default", ""); code != 200 || len(body["data"].([]any)) != 3 || body["pagination"] != nil {
		t.Errorf("unpaged list: %d %v", code, body)
	}
	if code, _, _ := c.do("GET", "/v1/provisioning.cattle.io.clusters/fleet-default?limit=1&continue=%25%25", ""); code != 400 {
		t.Errorf("bad continue: %d, want 400", code)
	}
}
