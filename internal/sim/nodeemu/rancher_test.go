package nodeemu

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/ranchersim"
)

func post(t *testing.T, url, token string, in any, out any) int {
	t.Helper()
	b, _ := json.Marshal(in)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		_ = json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

// managementID waits for a provisioning cluster's management cluster: Rancher names it after
// the create has answered (ranchersim controllers.go).
func managementID(t *testing.T, base, token, name string) string {
	t.Helper()
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/provisioning.cattle.io.clusters/fleet-default/"+name, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var prov struct {
			Status struct{ ClusterName string } `json:"status"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&prov)
		resp.Body.Close()
		if prov.Status.ClusterName != "" {
			return prov.Status.ClusterName
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("no management cluster for %s", name)
		}
	}
}

// postToken creates the cluster's registration token, posting again while Rancher answers 404
// because the cluster's namespace is not there yet.
func postToken(t *testing.T, base, token, clusterID string, out any) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		code := post(t, base+"/v3/clusterregistrationtokens", token, map[string]any{"clusterId": clusterID}, out)
		if code == http.StatusCreated {
			return
		}
		if code != http.StatusNotFound || time.Since(start) > 5*time.Second {
			t.Fatalf("registration token: HTTP %d", code)
		}
	}
}

// TestRegisterWithRancher: a rancher-bootstrapped node parsed from the golden user data
// registers with the cluster's registration token under its name, roles and inventory
// labels; a wrong token is refused.
func TestRegisterWithRancher(t *testing.T) {
	sim := ranchersim.New(ranchersim.Options{Seed: 2, ControllerDelay: -1}) // its controllers at once: the test reads the create's answer
	srv := httptest.NewServer(sim)
	defer srv.Close()
	var prov struct {
		Status struct{ ClusterName string } `json:"status"`
	}
	post(t, srv.URL+"/v1/provisioning.cattle.io.clusters/fleet-default", sim.Token(), map[string]any{
		"metadata": map[string]any{"name": "prod"}, "spec": map[string]any{"kubernetesVersion": "v1.31.7+rke2r1", "rkeConfig": map[string]any{}}}, &prov)
	var crt struct{ Token string }
	prov.Status.ClusterName = managementID(t, srv.URL, sim.Token(), "prod")
	postToken(t, srv.URL, sim.Token(), prov.Status.ClusterName, &crt)
	b := golden(t, "rancher-server-initial.yaml")
	if !strings.HasPrefix(b.RancherURL, "https://") {
		t.Fatalf("rancher URL %q not parsed", b.RancherURL)
	}
	b.RancherURL = srv.URL
	if err := b.RegisterWithRancher(context.Background(), http.DefaultClient, "wrong-token"); err == nil {
		t.Fatal("registered with a wrong token")
	}
	if err := b.RegisterWithRancher(context.Background(), http.DefaultClient, crt.Token); err != nil {
		t.Fatal(err)
	}
	nodes := sim.Nodes()
	if len(nodes) != 1 || nodes[0].Name != "prod-server-0" || nodes[0].ClusterID != prov.Status.ClusterName ||
		nodes[0].Labels["rke2.site-agent.waldur.com/role"] != "server" {
		t.Fatalf("nodes %+v", nodes)
	}
}
