package nodeemu

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/ranchersim"
)

// importedCluster creates a provisioning cluster (imported: no rkeConfig, unless provisioned)
// and its registration token; it returns the management id and the manifest URL.
func importedCluster(t *testing.T, srv *httptest.Server, sim *ranchersim.Server, name string, provisioned bool) (string, string) {
	t.Helper()
	spec := map[string]any{"kubernetesVersion": "v1.31.7+rke2r1"}
	if provisioned {
		spec["rkeConfig"] = map[string]any{}
	}
	var prov struct {
		Status struct{ ClusterName string } `json:"status"`
	}
	post(t, srv.URL+"/v1/provisioning.cattle.io.clusters/fleet-default", sim.Token(), map[string]any{"metadata": map[string]any{"name": name}, "spec": spec}, &prov)
	var crt struct{ ManifestURL string }
	cid := managementID(t, srv.URL, sim.Token(), name)
	postToken(t, srv.URL, sim.Token(), cid, &crt)
	return cid, crt.ManifestURL
}

func rancherNodes(sim *ranchersim.Server, cid string) map[string]string {
	out := map[string]string{}
	for _, n := range sim.Nodes() {
		if n.ClusterID == cid {
			out[n.Name] = n.State + " " + n.Labels["rke2.site-agent.waldur.com/role"]
		}
	}
	return out
}

// TestImportedClusterReportsNodes: the initial server's applied import manifest connects the
// emulated RKE2 cluster to Rancher, whose v3 nodes then follow the cluster — joins (with their
// node-label labels), a stopped node (unavailable), a removed one (gone); a bad manifest URL,
// a tampered manifest and a provisioned cluster's manifest are refused.
func TestImportedClusterReportsNodes(t *testing.T) {
	ctx := context.Background()
	sim := ranchersim.New(ranchersim.Options{Seed: 5, NodeActiveAfter: time.Millisecond, ControllerDelay: -1}) // its controllers at once: these tests read the create's answers
	srv := httptest.NewServer(sim)
	defer srv.Close()
	hc := http.DefaultClient
	cid, manifestURL := importedCluster(t, srv, sim, "halo", false)
	manifest, err := FetchManifest(ctx, hc, manifestURL)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCluster("")
	initial, joining := golden(t, "rke2-server-initial.yaml"), golden(t, "rke2-server-joining.yaml")
	if err := c.Join(initial, "join-token", "10.0.0.11"); err != nil {
		t.Fatal(err)
	}
	if len(rancherNodes(sim, cid)) != 0 {
		t.Fatal("nodes in Rancher before the import manifest was applied")
	}
	if err := c.Apply(manifest, hc); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if got := rancherNodes(sim, cid); got["prod-server-0"] != "active server" || len(got) != 1 {
		t.Fatalf("after the import: %v", got)
	}
	if err := c.Join(joining, "another-token", "10.0.0.12"); err == nil || !strings.Contains(err.Error(), "token") {
		t.Fatalf("a node with another token joined: %v", err)
	}
	if err := c.Join(joining, "join-token", "10.0.0.12"); err != nil {
		t.Fatal(err)
	}
	if got := rancherNodes(sim, cid); len(got) != 2 || !strings.HasSuffix(got["prod-server-2"], " server") {
		t.Fatalf("after a join: %v", got)
	}
	if c.Stop("prod-server-2"); rancherNodes(sim, cid)["prod-server-2"] != "unavailable server" {
		t.Fatalf("a stopped node: %v", rancherNodes(sim, cid))
	}
	if c.Remove("prod-server-2"); len(rancherNodes(sim, cid)) != 1 || len(c.ReportErrors()) != 0 {
		t.Fatalf("a removed node: %v %v", c.ReportErrors(), rancherNodes(sim, cid))
	}
	if err := c.Apply(manifest, hc); err != nil || len(rancherNodes(sim, cid)) != 1 {
		t.Fatalf("applying the manifest again: %v %v", err, rancherNodes(sim, cid))
	}

	if _, err := FetchManifest(ctx, hc, strings.Replace(manifestURL, "/import/", "/import/x", 1)); err == nil {
		t.Error("a manifest fetched with a wrong token")
	}
	tampered := strings.Replace(string(manifest), "CATTLE_CREDENTIAL_NAME", "OTHER", 1)
	if err := NewCluster("").Apply([]byte(tampered), hc); err == nil {
		t.Error("a manifest without the agent's credentials applied")
	}
	_, provURL := importedCluster(t, srv, sim, "custom", true)
	provManifest, err := FetchManifest(ctx, hc, provURL)
	if err != nil {
		t.Fatal(err)
	}
	other := NewCluster("")
	if err := other.Join(initial, "t", "10.1.0.1"); err != nil {
		t.Fatal(err)
	}
	if err := other.Apply(provManifest, hc); err == nil || !strings.Contains(err.Error(), "409") {
		t.Errorf("a provisioned cluster imported: %v", err)
	}
}
