package rancher

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
)

// register plays a node's system agent with the cluster's registration token.
func (w *world) register(t *testing.T, token secret.Secret, name string, labels map[string]string) {
	t.Helper()
	reg, err := New(Config{URL: w.srv.URL, Token: token, Transport: w.srv.Client().Transport}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.do(context.Background(), http.MethodPost, ranchersim.RegisterEndpoint, nil,
		map[string]any{"nodeName": name, "roles": []string{"etcd", "controlplane"}, "labels": labels, "cpu": 8, "memoryMiB": 16384}, nil); err != nil {
		t.Fatal(err)
	}
}

// A provisioning cluster's life as the rke2 backend drives it: made once (a repeated ensure
// finds it), its management cluster's registration token, a node that registers, is labelled,
// drained and deleted, the capacity it adds, a group bound once and unbound, a kubeconfig, and
// the deletion Rancher finishes later.
func TestProvisioningLifecycle(t *testing.T) {
	w := newWorld(t, ranchersim.Options{})
	ctx := ctxT(t)
	labels := map[string]string{"rke2.site-agent.waldur.com/cluster": "u1"}
	spec := map[string]any{"kubernetesVersion": "v1.31.7+rke2r1", "rkeConfig": map[string]any{}}
	p, err := w.c.EnsureProvisioningCluster(ctx, "prod", Meta{Labels: labels}, spec)
	if err != nil || p.Metadata.Name != "prod" || p.Status.ClusterName != "" || p.Metadata.Labels["rke2.site-agent.waldur.com/cluster"] != "u1" {
		t.Fatalf("ensure (Rancher names the management cluster a moment later): %+v %v", p, err)
	}
	waitFor(t, "the management cluster", func() bool {
		p, err = w.c.ProvisioningCluster(ctx, "prod")
		return err == nil && p.Status.ClusterName != ""
	})
	again, err := w.c.EnsureProvisioningCluster(ctx, "prod", Meta{}, spec)
	if err != nil || again.Status.ClusterName != p.Status.ClusterName || w.sim.Calls()["prov.create"] != 1 {
		t.Fatalf("second ensure: %+v %v (calls %v)", again, err, w.sim.Calls())
	}
	id := p.Status.ClusterName
	var reg Registration
	waitFor(t, "the cluster's namespace", func() bool { // fast retries give up before the simulator's 50 ms
		reg, err = w.c.Registration(ctx, id)
		if err != nil && !errors.Is(err, failure.ErrNotReady) {
			t.Fatal(err)
		}
		return err == nil
	})
	w.register(t, reg.Token, "prod-server-0", map[string]string{"a": "1"})
	var nodes []Node
	waitFor(t, "the node to become active", func() bool {
		nodes, err = w.c.Nodes(ctx, id)
		return err == nil && len(nodes) == 1 && nodes[0].State == "active"
	})
	if nodes[0].Name() != "prod-server-0" {
		t.Fatalf("nodes %+v", nodes)
	}
	if capa, err := w.c.ClusterCapacity(ctx, id); err != nil || capa.Nodes != 1 || capa.CPUMillis != 8000 || capa.MemoryBytes != 16<<30 {
		t.Fatalf("capacity %+v %v", capa, err)
	}
	if err := w.c.SetNodeLabels(ctx, nodes[0].ID, map[string]string{"b": "2"}); err != nil {
		t.Fatal(err)
	}
	if nodes, _ = w.c.Nodes(ctx, id); nodes[0].Labels["a"] != "1" || nodes[0].Labels["b"] != "2" {
		t.Fatalf("labels not merged: %v", nodes[0].Labels)
	}
	if drained, err := w.c.DrainNode(ctx, nodes[0].ID); err != nil || drained {
		t.Fatalf("first drain call: %v %v", drained, err)
	}
	waitFor(t, "the drain", func() bool { d, err := w.c.DrainNode(ctx, nodes[0].ID); return err == nil && d })
	for range 2 {
		if err := w.c.DeleteNode(ctx, nodes[0].ID); err != nil {
			t.Fatal(err)
		}
	}
	clusterExtras(t, w, id)
	if err := w.c.DeleteProvisioningCluster(ctx, "prod"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the cluster to go", func() bool {
		_, err := w.c.ProvisioningCluster(ctx, "prod")
		return errors.Is(err, failure.ErrNotFound)
	})
	if err := w.c.DeleteProvisioningCluster(ctx, "prod"); err != nil {
		t.Fatalf("deleting a cluster that is gone: %v", err)
	}
}

// clusterExtras: a group bound once and unbound, a kubeconfig, and the APIs' pings.
func clusterExtras(t *testing.T, w *world, id string) {
	ctx := ctxT(t)
	for range 2 {
		if err := w.c.BindClusterGroup(ctx, id, "keycloakoidc_group://c_prod_owner", "cluster-owner"); err != nil {
			t.Fatal(err)
		}
	}
	if got := w.sim.ClusterRoleBindings(); len(got) != 1 {
		t.Fatalf("bindings %v, want one", got)
	}
	if err := w.c.UnbindClusterGroups(ctx, id, []string{"keycloakoidc_group://c_prod_owner"}); err != nil || len(w.sim.ClusterRoleBindings()) != 0 {
		t.Fatalf("unbind: %v, left %v", err, w.sim.ClusterRoleBindings())
	}
	kc, err := w.c.GenerateKubeconfig(ctx, id)
	if err != nil || kc.Server != w.srv.URL+"/k8s/clusters/"+id || kc.Token.IsZero() {
		t.Fatalf("kubeconfig %q %v", kc.Server, err)
	}
	if got := w.sim.KubeconfigTokens(id); len(got) != 1 || got[0] != kc.Token.Reveal() {
		t.Fatalf("rancher made %d tokens, want the one returned", len(got))
	}
	if _, err := w.c.GenerateKubeconfig(ctx, "c-m-nothere"); !errors.Is(err, failure.ErrNotFound) {
		t.Fatalf("unknown cluster: %v", err)
	}
	if err := w.c.PingV1(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.c.PingV3(ctx); err != nil {
		t.Fatal(err)
	}
}

// A create whose answer was lost is not repeated blindly (transient error); the next ensure
// finds the cluster and creates nothing.
func TestProvisioningCreateAnswerLost(t *testing.T) {
	w := newWorld(t, ranchersim.Options{})
	ctx := ctxT(t)
	w.sim.FailNext("prov.create", 1, ranchersim.FaultLoseResponse)
	spec := map[string]any{"kubernetesVersion": "v1.31.7+rke2r1"}
	_, err := w.c.EnsureProvisioningCluster(ctx, "lost", Meta{}, spec)
	if !failure.IsTransient(err) {
		t.Fatalf("lost answer: %v", err)
	}
	w.sim.ResetCalls()
	p, err := w.c.EnsureProvisioningCluster(ctx, "lost", Meta{}, spec)
	if err != nil || p.Metadata.Name != "lost" || w.sim.Calls()["prov.create"] != 0 {
		t.Fatalf("after a lost create: %+v %v (calls %v)", p, err, w.sim.Calls())
	}
	if got := w.sim.ProvisionedClusters(); len(got) != 1 {
		t.Fatalf("clusters %v, want one", got)
	}
}
