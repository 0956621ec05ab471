package ranchersim

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func versions(s *Server, cid string) map[string]string {
	out := map[string]string{}
	for _, n := range s.Nodes() {
		if n.ClusterID == cid {
			out[n.Name] = n.Version
		}
	}
	return out
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A provisioned cluster's new spec.kubernetesVersion is rolled through its machines: etcd and
// control-plane ones one at a time, then workers workerConcurrency at a time; a machine being
// upgraded shows "cordoned", then the new kubelet version.
func TestProvisionedClusterUpgrade(t *testing.T) {
	s, c := newSim(t, Options{NodeActiveAfter: time.Millisecond, UpgradeStepDuration: 20 * time.Millisecond})
	spec := map[string]any{"kubernetesVersion": "v1.31.7+rke2r1", "rkeConfig": map[string]any{
		"upgradeStrategy": map[string]any{"controlPlaneConcurrency": "1", "workerConcurrency": "2"}}}
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"name": "up"}, "spec": spec})
	code, prov, _ := c.do("POST", "/v1/provisioning.cattle.io.clusters/fleet-default", string(body))
	if code != 201 {
		t.Fatalf("create: %d %v", code, prov)
	}
	cid := managementID(t, c, "up")
	agent := &client{t: t, base: c.base, auth: "Bearer " + postToken(t, c, cid)["token"].(string)}
	for _, n := range []string{`"up-server-0","roles":["etcd","controlplane"]`, `"up-server-1","roles":["etcd","controlplane"]`,
		`"up-agent-0","roles":["worker"]`, `"up-agent-1","roles":["worker"]`} {
		if code, _, _ := agent.do("POST", RegisterEndpoint, `{"nodeName":`+n+`}`); code != 201 {
			t.Fatalf("register %s: %d", n, code)
		}
	}
	if v := versions(s, cid); v["up-agent-1"] != "v1.31.7+rke2r1" {
		t.Fatalf("versions at registration %v", v)
	}
	_, got, _ := c.do("GET", "/v1/provisioning.cattle.io.clusters/fleet-default/up", "")
	spec["kubernetesVersion"] = "v1.32.3+rke2r1"
	body, _ = json.Marshal(map[string]any{"metadata": map[string]any{"name": "up", "resourceVersion": got["metadata"].(map[string]any)["resourceVersion"]}, "spec": spec})
	if code, b, _ := c.do("PUT", "/v1/provisioning.cattle.io.clusters/fleet-default/up", string(body)); code != 200 {
		t.Fatalf("update: %d %v", code, b)
	}
	sawCordoned := false
	waitUntil(t, "the rollout", func() bool {
		for _, st := range nodeStates(s, cid) {
			sawCordoned = sawCordoned || strings.HasPrefix(st, "cordoned")
		}
		return len(s.UpgradeLog()) == 4
	})
	want := []string{cid + " up-server-0 v1.32.3+rke2r1", cid + " up-server-1 v1.32.3+rke2r1"}
	if log := s.UpgradeLog(); !sawCordoned || strings.Join(log[:2], ",") != strings.Join(want, ",") || !strings.Contains(strings.Join(log[2:], ","), "up-agent-0") {
		t.Fatalf("rollout %v (cordoned seen: %v)", log, sawCordoned)
	}
	if got := s.UpgradeBatchMax(); got["server"] != 1 || got["agent"] != 2 {
		t.Fatalf("largest batches %v, want 1 server and 2 agents", got)
	}
	_, n, _ := c.do("GET", "/v3/nodes?clusterId="+cid, "")
	for _, item := range n["data"].([]any) {
		info := item.(map[string]any)["info"].(map[string]any)["kubernetes"].(map[string]any)
		if info["kubeletVersion"] != "v1.32.3+rke2r1" {
			t.Fatalf("node %v", item)
		}
	}
}

// An imported cluster is upgraded through its management cluster's rke2Config: the update needs
// the cluster's name, and the upgrade job of each node is the Upgrader's, servers first.
func TestImportedClusterUpgrade(t *testing.T) {
	s, c := newSim(t, Options{NodeActiveAfter: time.Millisecond, UpgradeStepDuration: 10 * time.Millisecond})
	cid, token := provClusterWithToken(t, c, "imp", false)
	agent := &client{t: t, base: c.base, auth: "Bearer " + token}
	report := func(v map[string]string) {
		nodes := []map[string]any{}
		for _, n := range []string{"imp-agent-0", "imp-server-0", "imp-server-1"} {
			roles := []string{"worker"}
			if strings.Contains(n, "server") {
				roles = []string{"etcd", "controlplane"}
			}
			nodes = append(nodes, map[string]any{"nodeName": n, "ready": true, "roles": roles, "kubeletVersion": v[n]})
		}
		body, _ := json.Marshal(map[string]any{"nodes": nodes})
		if code, _, _ := agent.do("POST", ClusterAgentEndpoint, string(body)); code != 204 {
			t.Errorf("report: %d", code)
		}
	}
	var mu sync.Mutex
	running := map[string]string{"imp-agent-0": "v1.31.7+rke2r1", "imp-server-0": "v1.31.7+rke2r1", "imp-server-1": "v1.31.7+rke2r1"}
	report(running)
	var jobs []string
	s.SetUpgrader(func(cluster, node, version string) error {
		mu.Lock()
		running[node] = version
		jobs = append(jobs, node)
		v := map[string]string{}
		for k, x := range running {
			v[k] = x
		}
		mu.Unlock()
		report(v)
		return nil
	})
	if code, b, _ := c.do("PUT", "/v3/clusters/"+cid, `{"rke2Config":{"kubernetesVersion":"v1.32.3+rke2r1"}}`); code != 422 || b["fieldName"] != "Cluster name" {
		t.Fatalf("an update without the name: %d %v", code, b)
	}
	code, b, _ := c.do("PUT", "/v3/clusters/"+cid, `{"name":"imp","rke2Config":{"kubernetesVersion":"v1.32.3+rke2r1",`+
		`"rke2upgradeStrategy":{"serverConcurrency":1,"workerConcurrency":1,"drainServerNodes":true,"drainWorkerNodes":true}}}`)
	if code != 200 || b["rke2Config"].(map[string]any)["kubernetesVersion"] != "v1.32.3+rke2r1" {
		t.Fatalf("update: %d %v", code, b)
	}
	waitUntil(t, "the rollout", func() bool { return len(s.UpgradeLog()) == 3 })
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(jobs, " ") != "imp-server-0 imp-server-1 imp-agent-0" {
		t.Fatalf("jobs ran in the order %v", jobs)
	}
	if v := versions(s, cid); v["imp-agent-0"] != "v1.32.3+rke2r1" || v["imp-server-1"] != "v1.32.3+rke2r1" {
		t.Fatalf("versions %v", v)
	}
}

// A failed upgrade job and an rke2Config on a cluster Rancher provisions are recorded as
// violations while s.mu is held (each deadlocked the simulator when violation took the lock
// again); the failed job runs again in the next batch.
func TestUpgradeViolationsUnderLock(t *testing.T) {
	s, c := newSim(t, Options{NodeActiveAfter: time.Millisecond, UpgradeStepDuration: time.Millisecond})
	c.hc = &http.Client{Timeout: 5 * time.Second}
	provID, _ := provClusterWithToken(t, c, "prov", true)
	if code, b, _ := c.do("PUT", "/v3/clusters/"+provID, `{"name":"prov","rke2Config":{"kubernetesVersion":"v1.32.3+rke2r1"}}`); code != 200 {
		t.Fatalf("rke2Config on a provisioned cluster: %d %v", code, b)
	}
	cid, token := provClusterWithToken(t, c, "imp", false)
	agent := &client{t: t, base: c.base, auth: "Bearer " + token, hc: c.hc}
	report := func(version string) {
		body := `{"nodes":[{"nodeName":"imp-0","ready":true,"roles":["worker"],"kubeletVersion":"` + version + `"}]}`
		if code, _, _ := agent.do("POST", ClusterAgentEndpoint, body); code != 204 {
			t.Errorf("report: %d", code)
		}
	}
	report("v1.31.7+rke2r1")
	var mu sync.Mutex
	tries := 0
	s.SetUpgrader(func(_, _, version string) error {
		mu.Lock()
		tries++
		first := tries == 1
		mu.Unlock()
		if first {
			return errors.New("job failed")
		}
		report(version)
		return nil
	})
	if code, b, _ := c.do("PUT", "/v3/clusters/"+cid, `{"name":"imp","rke2Config":{"kubernetesVersion":"v1.32.3+rke2r1"}}`); code != 200 {
		t.Fatalf("update: %d %v", code, b)
	}
	waitUntil(t, "the job tried again", func() bool { return len(s.UpgradeLog()) == 1 })
	v := s.Violations()
	if len(v) != 2 || !strings.Contains(v[0], "rke2Config on "+provID) || !strings.Contains(v[1], "upgrade job on "+cid+"/imp-0: job failed") {
		t.Fatalf("violations %q", v)
	}
}
