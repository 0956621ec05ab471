package assembly

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/waldur/site-agent/internal/backends/rke2"
	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/sim/simfault"
	"github.com/waldur/site-agent/internal/upstream"
)

const uuid = "0123456789abcdef0123456789abcdef"

// newSim is rke2's Rancher port on the shared client, against the Rancher simulator, with fast
// retries.
func newSim(t *testing.T) (*ranchersim.Server, rancherPort, string) {
	t.Helper()
	sim := ranchersim.New(ranchersim.Options{Seed: 1, NodeActiveAfter: 20 * time.Millisecond, DrainDuration: 20 * time.Millisecond,
		ProvisionDeleteDelay: 20 * time.Millisecond})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	retries := 8
	c, err := rancherapi.New(rancherapi.Config{URL: srv.URL, Token: secret.New(sim.Token()),
		Upstream: upstream.Settings{Retries: &retries, BackoffMin: time.Millisecond, BackoffMax: 5 * time.Millisecond}}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			sim.AssertNoViolations(t)
		}
	})
	return sim, rancherPort{c: c}, srv.URL
}

// register plays a node's system agent with the cluster's registration token.
func register(t *testing.T, base string, token secret.Secret, name string, labels map[string]string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"nodeName": name, "roles": []string{"etcd", "controlplane"}, "labels": labels, "cpu": 8, "memoryMiB": 16384})
	req, _ := http.NewRequest(http.MethodPost, base+ranchersim.RegisterEndpoint, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token.Reveal())
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("register %s: %v %v", name, err, resp)
	}
	resp.Body.Close()
}

// registration waits out the simulator's 404 for a cluster whose namespace Rancher has not made
// yet (the fast retries give up before it is there; the backend's next pass would ask again).
func registration(t *testing.T, c rancherPort, rc rke2.RancherCluster) rke2.Registration {
	t.Helper()
	var reg rke2.Registration
	waitFor(t, "the registration token", func() bool {
		var err error
		reg, err = c.Registration(context.Background(), rc)
		if err != nil && !errors.Is(err, failure.ErrNotReady) {
			t.Fatal(err)
		}
		return err == nil
	})
	return reg
}

// managedCluster waits until Rancher has made the cluster's management cluster (a moment after
// the provisioning cluster's create: the create answer has no status).
func managedCluster(t *testing.T, c rancherPort, ref rke2.ClusterRef) rke2.RancherCluster {
	t.Helper()
	var rc rke2.RancherCluster
	waitFor(t, "the management cluster of "+ref.Name, func() bool {
		var err error
		rc, err = c.Cluster(context.Background(), ref)
		return err == nil && rc.ManagementID != ""
	})
	return rc
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestClusterLifecycle: create (idempotent), registration token (stable), a node registers,
// is labelled, drained and deleted; capacity sums the nodes; bindings are made once and
// removed; the cluster is deleted (not ready until gone).
func TestClusterLifecycle(t *testing.T) {
	ctx := context.Background()
	sim, c, base := newSim(t)
	ref := rke2.ClusterRef{UUID: uuid, Name: "prod"}
	spec := rke2.ProvisionSpec{K8sVersion: "v1.31.7+rke2r1", CNI: "cilium", DataDir: "/opt/rke2_storage"}
	rc, err := c.EnsureCluster(ctx, ref, spec)
	if err != nil || rc.ManagementID != "" {
		t.Fatalf("ensure (the management cluster comes a moment later): %+v %v", rc, err)
	}
	if err := c.BindGroup(ctx, rc, "keycloakoidc_group://early", "cluster-owner"); !errors.Is(err, failure.ErrNotReady) {
		t.Fatalf("a binding before the management cluster: %v, want not ready", err)
	}
	rc = managedCluster(t, c, ref)
	if !strings.HasPrefix(rc.ManagementID, "c-m-") {
		t.Fatalf("management id %q", rc.ManagementID)
	}
	again, err := c.EnsureCluster(ctx, ref, spec)
	if err != nil || again.ManagementID != rc.ManagementID {
		t.Fatalf("second ensure: %+v %v", again, err)
	}
	if _, err := c.EnsureCluster(ctx, rke2.ClusterRef{UUID: "ffff" + uuid[4:], Name: "prod"}, spec); !errors.Is(err, failure.ErrDuplicate) {
		t.Fatalf("another resource's cluster of the same name: %v", err)
	}
	if _, err := c.Registration(ctx, rke2.RancherCluster{Name: "prod"}); !errors.Is(err, failure.ErrNotReady) {
		t.Fatalf("registration before the management id: %v", err)
	}
	reg := registration(t, c, rc)
	reg2, err2 := c.Registration(ctx, rc)
	tok := reg.Token
	if err2 != nil || tok.Reveal() == "" || tok.Reveal() != reg2.Token.Reveal() {
		t.Fatalf("tokens %v (equal: %v)", err2, tok.Reveal() == reg2.Token.Reveal())
	}
	if want := base + "/v3/import/" + tok.Reveal() + "_" + rc.ManagementID + ".yaml"; reg.ManifestURL.Reveal() != want || reg2.ManifestURL.Reveal() != want {
		t.Fatalf("manifest URL %q, want %q", reg.ManifestURL.Reveal(), want)
	}
	register(t, base, tok, "prod-server-0", map[string]string{"a": "1"})
	var nodes []rke2.RancherNodeView
	waitFor(t, "the node to become active", func() bool {
		nodes, err = c.Nodes(ctx, rc)
		return err == nil && len(nodes) == 1 && nodes[0].State == "active"
	})
	if nodes[0].Name != "prod-server-0" {
		t.Fatalf("nodes %+v", nodes)
	}
	capa, err := c.Capacity(ctx, rc)
	if err != nil || capa.Nodes != 1 || capa.CPUMillis != 8000 || capa.MemoryBytes != 16<<30 {
		t.Fatalf("capacity %+v %v", capa, err)
	}
	if err := c.SetNodeLabels(ctx, rc, nodes[0].ID, map[string]string{"b": "2"}); err != nil {
		t.Fatal(err)
	}
	nodes, _ = c.Nodes(ctx, rc)
	if nodes[0].Labels["a"] != "1" || nodes[0].Labels["b"] != "2" {
		t.Fatalf("labels not merged: %v", nodes[0].Labels)
	}
	if drained, err := c.Drain(ctx, rc, nodes[0].ID); err != nil || drained {
		t.Fatalf("first drain call: %v %v", drained, err)
	}
	waitFor(t, "the drain", func() bool { d, err := c.Drain(ctx, rc, nodes[0].ID); return err == nil && d })
	// The etcd member goes through RKE2's annotation on the downstream Node: asked once, confirmed
	// gone once the controller (here the simulator's remover) has removed it; an unknown node is gone.
	members := map[string]bool{"prod-server-0": true}
	sim.SetEtcdRemover(func(_, node string) (bool, error) { delete(members, node); return true, nil })
	if gone, err := c.RemoveEtcdMember(ctx, rc, "prod-server-0"); err != nil || gone {
		t.Fatalf("first member removal call (it asks): %v %v", gone, err)
	}
	if gone, err := c.RemoveEtcdMember(ctx, rc, "prod-server-0"); err != nil || !gone || members["prod-server-0"] {
		t.Fatalf("second member removal call: %v %v %v", gone, err, members)
	}
	if gone, err := c.RemoveEtcdMember(ctx, rc, "prod-server-7"); err != nil || !gone {
		t.Fatalf("an unknown node: %v %v", gone, err)
	}
	for range 2 {
		if err := c.DeleteNode(ctx, rc, nodes[0].ID); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := c.BindGroup(ctx, rc, "keycloakoidc_group://c_prod_owner", "cluster-owner"); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.UnbindGroups(ctx, rc, []string{"keycloakoidc_group://c_prod_owner"}); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteCluster(ctx, ref); !errors.Is(err, failure.ErrNotReady) {
		t.Fatalf("delete: %v, want not ready while Rancher removes it", err)
	}
	waitFor(t, "the cluster to go", func() bool { return c.DeleteCluster(ctx, ref) == nil })
	if _, err := c.Cluster(ctx, ref); !errors.Is(err, failure.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}

// TestFaultsAreRetried: 30 % of Rancher's answers fail (5xx, 429, resets); every call still
// succeeds and nothing is made twice.
func TestFaultsAreRetried(t *testing.T) {
	ctx := context.Background()
	sim, c, _ := newSim(t)
	sim.SetFaults(ranchersim.Faults{Rate: 0.3, Seed: 4})
	ref := rke2.ClusterRef{UUID: uuid, Name: "prod"}
	var rc rke2.RancherCluster
	var err error
	for i := 0; i < 5; i++ {
		if rc, err = c.EnsureCluster(ctx, ref, rke2.ProvisionSpec{K8sVersion: "v1.31.7+rke2r1"}); err == nil || !failure.IsTransient(err) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the management cluster", func() bool {
		rc, err = c.Cluster(ctx, ref)
		return err == nil && rc.ManagementID != ""
	})
	for range 5 {
		if err := c.BindGroup(ctx, rc, "keycloakoidc_group://g", "cluster-member"); err != nil && !failure.IsTransient(err) {
			t.Fatal(err)
		}
	}
	sim.SetFaults(ranchersim.Faults{})
	if got := sim.ProvisionedClusters(); len(got) != 1 {
		t.Fatalf("clusters %v, want one", got)
	}
	if got := sim.ClusterRoleBindings(); len(got) != 1 {
		t.Fatalf("bindings %v, want one", got)
	}
	if got := strings.Join(sim.FaultLog(), ","); got == "" {
		t.Fatal("no fault was injected")
	}
}

// TestClusterOwner: a free name is not found; a cluster made by EnsureCluster answers with the
// resource UUID it is labelled with.
func TestClusterOwner(t *testing.T) {
	ctx := context.Background()
	_, c, _ := newSim(t)
	if _, err := c.ClusterOwner(ctx, "prod"); !errors.Is(err, failure.ErrNotFound) {
		t.Fatalf("free name: %v, want not found", err)
	}
	if _, err := c.EnsureCluster(ctx, rke2.ClusterRef{UUID: uuid, Name: "prod"}, rke2.ProvisionSpec{K8sVersion: "v1.31.7+rke2r1"}); err != nil {
		t.Fatal(err)
	}
	if owner, err := c.ClusterOwner(ctx, "prod"); err != nil || owner != uuid {
		t.Fatalf("owner %q %v, want %s", owner, err, uuid)
	}
}

// TestKubeconfig: Rancher's generateKubeconfig answers a kubeconfig of its cluster proxy with a
// new token per call; a cluster Rancher does not know is not found.
func TestKubeconfig(t *testing.T) {
	ctx := context.Background()
	sim, c, base := newSim(t)
	ref := rke2.ClusterRef{UUID: uuid, Name: "prod"}
	if _, err := c.EnsureCluster(ctx, ref, rke2.ProvisionSpec{K8sVersion: "v1.31.7+rke2r1"}); err != nil {
		t.Fatal(err)
	}
	rc := managedCluster(t, c, ref)
	kc, err := c.Kubeconfig(ctx, rc)
	if err != nil {
		t.Fatal(err)
	}
	if kc.Server != base+"/k8s/clusters/"+rc.ManagementID || kc.Token.IsZero() {
		t.Fatalf("kubeconfig server %q, token set %v", kc.Server, !kc.Token.IsZero())
	}
	if got := sim.KubeconfigTokens(rc.ManagementID); len(got) != 1 || got[0] != kc.Token.Reveal() {
		t.Fatalf("rancher made tokens %d, want the one returned", len(got))
	}
	if _, err := c.Kubeconfig(ctx, rke2.RancherCluster{Name: "gone", ManagementID: "c-m-nothere"}); !errors.Is(err, failure.ErrNotFound) {
		t.Fatalf("unknown cluster: %v", err)
	}
}

// TestDiagnose: the v3 and v1 APIs answer the key, and the key's rights on provisioning clusters
// are asked of Rancher's own cluster (the simulator's key acts for an administrator; the real
// Rancher's restricted keys: rancher_real_test.go).
func TestDiagnose(t *testing.T) {
	sim, c, _ := newSim(t)
	lines := map[string]bool{}
	for _, l := range c.Diagnose(context.Background()) {
		lines[l.Name] = l.OK
		if !l.OK {
			t.Errorf("%s: %s", l.Name, l.Detail)
		}
	}
	if len(lines) != 3 || !lines["rancher rights"] {
		t.Fatalf("lines %v", lines)
	}
	if got := sim.Calls()["k8s.POST"]; got != len(provRights) {
		t.Fatalf("%d access reviews, want %d", got, len(provRights))
	}
}

// Issue 17 item 14: the cycle's ping is one request — one provisioning cluster listed, however
// many there are — and none while an answer from Rancher is fresh; a Rancher that stopped
// answering fails it once the last answer is older than that.
func TestPingIsOneRequestOrNone(t *testing.T) {
	sim, c, _ := newSim(t)
	ctx := context.Background()
	total := func() int { v3, k8s := sim.Total(); return v3 + k8s }
	if err := c.Ping(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := total(); got != 1 {
		t.Fatalf("first ping: %d requests %v, want 1", got, sim.Calls())
	}
	sim.ResetCalls()
	if err := c.Ping(ctx, time.Minute); err != nil || total() != 0 {
		t.Fatalf("ping right after an answer: %v, %d requests %v, want none", err, total(), sim.Calls())
	}
	if err := c.Ping(ctx, 0); err != nil || total() != 1 {
		t.Fatalf("ping with no answer fresh enough: %v, %d requests, want 1", err, total())
	}
	sim.SetFaults(ranchersim.Faults{Rate: 1, Seed: 1, Kinds: []simfault.Kind{simfault.Status503}})
	if err := c.Ping(ctx, time.Minute); err != nil {
		t.Fatalf("ping within a minute of an answer: %v", err)
	}
	if err := c.Ping(ctx, time.Nanosecond); err == nil {
		t.Fatal("ping of a Rancher answering 503 passed")
	}
}
