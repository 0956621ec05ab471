package rke2

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// A health pass (membership sync): Reconcile, then the metadata it found.
func healthPass(b *Backend, res backends.Resource) (error, map[string]any) {
	err := b.Reconcile(context.Background(), res)
	md, _ := b.Metadata(context.Background(), res)
	return err, md
}

// nodeMeta finds a node's entry in the metadata.
func nodeMeta(md map[string]any, name string) map[string]any {
	list, _ := md["nodes"].([]any)
	for _, n := range list {
		if m, _ := n.(map[string]any); m["name"] == name {
			return m
		}
	}
	return nil
}

func vmID(w *memWorld, name string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, vm := range w.servers {
		if vm.view.Name == name {
			return id
		}
	}
	return ""
}

// untilHealthy runs health passes, the world ticking in between, until one finds the cluster
// well with every node Ready; it fails t when a pass errs for good while the cluster serves.
func untilHealthy(t *testing.T, w *memWorld, b *Backend, res backends.Resource) map[string]any {
	t.Helper()
	for range 60 {
		err, md := healthPass(b, res)
		if err != nil && !failure.IsTransient(err) && md["health"] != "down" {
			t.Fatalf("a health pass failed: %v", err)
		}
		if err == nil && md["health"] == "ok" && md["stage"] == ClusterReady {
			return md
		}
		w.tick()
	}
	t.Fatal("the cluster did not heal in 60 passes")
	return nil
}

func readyCluster(t *testing.T, w *memWorld, kv ...any) backends.Resource {
	t.Helper()
	info, _ := createCluster(t, w, 3, 2, kv...)
	res := clusterResource(3, 2)
	res.BackendID = info.BackendID
	return res
}

// Issue 17 item 10: a node gone NotReady is reported in the resource's metadata at once (the
// cluster degraded, still serving: no error) and replaced only after node_repair_after; the
// cluster heals; a well cluster's metadata is what the order's end wrote (nothing to resend).
func TestHealthPassReportsThenReplacesNotReadyNode(t *testing.T) {
	w := newMemWorld(t, 3)
	info, _ := createCluster(t, w, 3, 2)
	res := clusterResource(3, 2)
	res.BackendID = info.BackendID
	b := memBackend(t, w, "node_repair_after", "10m")
	err, md := healthPass(b, res)
	if err != nil || md["health"] != "ok" || md["stage"] != ClusterReady || md["ready_agents"] != 2 {
		t.Fatalf("a well cluster: %v %v", err, md)
	}
	if a, _ := json.Marshal(md); string(a) != mustJSON(info.Metadata) {
		t.Fatalf("the order's metadata\n%s\ndiffers from a health pass's\n%s", mustJSON(info.Metadata), a)
	}
	if n := nodeMeta(md, "prod-server-0"); n["kubernetes"] != "Ready" || n["vm_state"] != "ACTIVE" || n["version"] != DefaultK8sVersion || n["role"] != "server" {
		t.Fatalf("node metadata %v", n)
	}
	before := vmID(w, "prod-agent-1")
	w.setReady(testCluster, "prod-agent-1", false)
	w.advance(5 * time.Minute)
	err, md = healthPass(b, res)
	n := nodeMeta(md, "prod-agent-1")
	if err != nil || md["health"] != "degraded" || n["kubernetes"] != "Unknown" || n["not_ready_since"] == nil {
		t.Fatalf("within the grace: %v %v %v", err, md["health"], n)
	}
	if vmID(w, "prod-agent-1") != before {
		t.Fatal("a node NotReady for less than node_repair_after was replaced")
	}
	w.advance(6 * time.Minute)
	err, md = healthPass(b, res)
	if err != nil || md["stage"] != "repairing" {
		t.Fatalf("past the grace: %v %v", err, md)
	}
	md = untilHealthy(t, w, b, res)
	if id := vmID(w, "prod-agent-1"); id != "" {
		t.Fatalf("the NotReady node was not replaced (%q is still there)", id)
	}
	if s, a, act := w.counts(testCluster); s != 3 || a != 2 || act != 5 || md["ready_agents"] != 2 {
		t.Fatalf("after the repair: %d servers, %d agents, %d active, metadata %v", s, a, act, md)
	}
	w.checkVaultAfterReady(t, BootstrapRancher)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A server VM in ERROR on a 3-server cluster is replaced with quorum kept: its etcd member is
// removed before its VM goes (the world fails the test otherwise), and the cluster ends with
// three live members.
func TestHealthPassReplacesServerInError(t *testing.T) {
	for _, mode := range []string{BootstrapRancher, BootstrapRKE2} {
		t.Run(mode, func(t *testing.T) {
			w := newMemWorld(t, 5)
			res := readyCluster(t, w, "bootstrap", mode)
			b := memBackend(t, w, "bootstrap", mode)
			before := vmID(w, "prod-server-1")
			w.setVM("prod-server-1", "ERROR")
			err, md := healthPass(b, res)
			if err != nil || nodeMeta(md, "prod-server-1")["vm_state"] != "ERROR" {
				t.Fatalf("a server in ERROR: %v %v", err, nodeMeta(md, "prod-server-1"))
			}
			untilHealthy(t, w, b, res)
			if id := vmID(w, "prod-server-1"); id == before {
				t.Fatal("the server in ERROR was not replaced")
			}
			if m := w.EtcdMembers(testCluster); len(m) != 3 {
				t.Fatalf("etcd members %v", m)
			}
			w.checkVaultAfterReady(t, mode)
		})
	}
}

// A cluster that loses etcd quorum cannot serve: the pass fails with a public reason (the
// resource is marked erred) naming the servers, nothing is replaced however long it lasts, and
// the first pass after the servers are back succeeds (the resource is OK again).
func TestHealthPassQuorumLoss(t *testing.T) {
	w := newMemWorld(t, 7)
	res := readyCluster(t, w)
	b := memBackend(t, w, "node_repair_after", "10m")
	ids := []string{vmID(w, "prod-server-1"), vmID(w, "prod-server-2")}
	w.setReady(testCluster, "prod-server-1", false)
	w.setReady(testCluster, "prod-server-2", false)
	for range 3 {
		w.advance(30 * time.Minute)
		err, md := healthPass(b, res)
		msg, public := failure.PublicMessage(err)
		if !public || !strings.Contains(msg, "etcd has no quorum: 1 of 3 server nodes ready (prod-server-1, prod-server-2 not ready)") ||
			md["health"] != "down" || md["health_reason"] == nil {
			t.Fatalf("without quorum: %v %v", err, md)
		}
	}
	if vmID(w, "prod-server-1") != ids[0] || vmID(w, "prod-server-2") != ids[1] {
		t.Fatal("a server was replaced while etcd had no quorum")
	}
	w.setReady(testCluster, "prod-server-1", true)
	w.setReady(testCluster, "prod-server-2", true)
	if err, md := healthPass(b, res); err != nil || md["health"] != "ok" {
		t.Fatalf("after the servers came back: %v %v", err, md)
	}
	// No agent Ready: workloads cannot run.
	w.setReady(testCluster, "prod-agent-0", false)
	w.setReady(testCluster, "prod-agent-1", false)
	if err, _ := healthPass(b, res); err == nil || !strings.Contains(err.Error(), "no agent node is ready") {
		t.Fatalf("without a Ready agent: %v", err)
	}
}

// A cluster annotated reconcile=paused (an etcd restore under way) is reported, never repaired.
func TestHealthPassPausedCluster(t *testing.T) {
	w := newMemWorld(t, 9)
	res := readyCluster(t, w)
	b := memBackend(t, w)
	w.mu.Lock()
	w.clusters[testCluster].paused = true
	w.mu.Unlock()
	before := vmID(w, "prod-server-1")
	w.setVM("prod-server-1", "ERROR")
	for range 5 {
		err, md := healthPass(b, res)
		if err != nil || md["stage"] != "paused" {
			t.Fatalf("paused: %v %v", err, md)
		}
		w.tick()
	}
	if vmID(w, "prod-server-1") != before || w.calls["DeleteServer"] != 0 {
		t.Fatal("a paused cluster was repaired")
	}
}

func TestAssess(t *testing.T) {
	srv := func(name, vm, ready string) Node {
		return Node{Name: name, Inventory: Inventory{Role: RoleServer}, VM: vm, Rancher: "active", Ready: ready}
	}
	agt := func(name, ready string) Node {
		return Node{Name: name, Inventory: Inventory{Role: RoleAgent}, VM: "ACTIVE", Rancher: "active", Ready: ready}
	}
	cases := []struct {
		nodes   []Node
		serving bool
		reason  string
	}{
		{[]Node{srv("s0", "ACTIVE", "True"), srv("s1", "ACTIVE", "True"), srv("s2", "ERROR", "True"), agt("a0", "True")}, true, ""},
		{[]Node{srv("s0", "ACTIVE", "True"), srv("s1", "ACTIVE", "Unknown"), srv("s2", "ERROR", "True"), agt("a0", "True")}, false, "1 of 3 server nodes ready (s1, s2 not ready)"},
		{[]Node{srv("s0", "ACTIVE", "False"), agt("a0", "True")}, false, "no server node is ready (s0)"},
		{[]Node{srv("s0", "ACTIVE", "True"), agt("a0", "False"), agt("a1", "Unknown")}, false, "no agent node is ready (a0, a1)"},
		{[]Node{agt("a0", "True")}, false, "no server node"},
		{[]Node{srv("s0", "ACTIVE", ""), agt("a0", "")}, true, ""}, // no Ready condition: Rancher's "active"
	}
	for i, c := range cases {
		h := Assess(c.nodes)
		if h.Serving != c.serving || !strings.Contains(h.Reason, c.reason) {
			t.Errorf("case %d: serving %v %q", i, h.Serving, h.Reason)
		}
	}
}
