package ranchersim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestEtcdMemberRemovalThroughNodeAnnotation: a provisioned cluster's server registers; its
// downstream Node (through /k8s/clusters/<id>) shows the etcd role; a JSON patch is refused
// (merge patch only); the remove annotation has the remover called until it succeeds, then
// removed-node-name is set; an unknown Node is 404.
func TestEtcdMemberRemovalThroughNodeAnnotation(t *testing.T) {
	sim := New(Options{Seed: 4})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	cid := provisionedWithNode(t, srv, sim, "prod-server-1")
	calls, ready := 0, false
	sim.SetEtcdRemover(func(c, node string) (bool, error) {
		if c != cid || node != "prod-server-1" {
			t.Errorf("remover called for %s %s", c, node)
		}
		calls++
		return ready, nil
	})
	nodeURL := srv.URL + "/k8s/clusters/" + cid + "/api/v1/nodes/prod-server-1"
	node := func(method, ct string, body any) (int, map[string]string, map[string]string) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, nodeURL, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+sim.Token())
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var n struct {
			Metadata struct{ Labels, Annotations map[string]string } `json:"metadata"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&n)
		return resp.StatusCode, n.Metadata.Labels, n.Metadata.Annotations
	}
	code, labels, _ := node(http.MethodGet, "", nil)
	if code != http.StatusOK || labels[labelEtcdRole] != "true" {
		t.Fatalf("GET node: %d %v", code, labels)
	}
	patch := map[string]any{"metadata": map[string]any{"annotations": map[string]string{annEtcdRemove: "true"}}}
	if code, _, _ := node(http.MethodPatch, "application/json", patch); code != http.StatusUnsupportedMediaType {
		t.Fatalf("a JSON patch: %d", code)
	}
	if code, _, ann := node(http.MethodPatch, "application/merge-patch+json", patch); code != http.StatusOK || ann[annEtcdRemoved] != "" || calls != 1 {
		t.Fatalf("annotated: %d %v (remover called %d times)", code, ann, calls)
	}
	ready = true
	if _, _, ann := node(http.MethodGet, "", nil); ann[annEtcdRemoved] != "prod-server-1" || calls != 2 {
		t.Fatalf("after the member went: %v (remover called %d times)", ann, calls)
	}
	if _, _, ann := node(http.MethodGet, "", nil); ann[annEtcdRemoved] != "prod-server-1" || calls != 2 {
		t.Fatalf("a removed member is not removed again: %v (%d calls)", ann, calls)
	}
	nodeURL = srv.URL + "/k8s/clusters/" + cid + "/api/v1/nodes/nope"
	if code, _, _ := node(http.MethodGet, "", nil); code != http.StatusNotFound {
		t.Fatalf("unknown node: %d", code)
	}
}

// provisionedWithNode creates a provisioned cluster with one registered etcd server.
func provisionedWithNode(t *testing.T, srv *httptest.Server, sim *Server, name string) string {
	t.Helper()
	do := func(url, token string, in, out any) int {
		b, _ := json.Marshal(in)
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_ = json.NewDecoder(resp.Body).Decode(out)
		return resp.StatusCode
	}
	do(srv.URL+"/v1/provisioning.cattle.io.clusters/fleet-default", sim.Token(), map[string]any{
		"metadata": map[string]any{"name": "prod"}, "spec": map[string]any{"kubernetesVersion": "v1.31.7+rke2r1", "rkeConfig": map[string]any{}}}, &struct{}{})
	cid := managementID(t, &client{t: t, base: srv.URL, auth: "Bearer " + sim.Token()}, "prod")
	var crt struct{ Token string }
	for start := time.Now(); do(srv.URL+"/v3/clusterregistrationtokens", sim.Token(), map[string]any{"clusterId": cid}, &crt) != http.StatusCreated; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("no registration token")
		}
	}
	if code := do(srv.URL+RegisterEndpoint, crt.Token, map[string]any{"nodeName": name, "roles": []string{"etcd", "controlplane"}, "cpu": 2, "memoryMiB": 4096}, &struct{}{}); code != http.StatusCreated {
		t.Fatalf("register: %d", code)
	}
	return cid
}
