package rke2

import (
	"testing"
)

// vms is the cluster's VMs by name (w.mu not held).
func (w *memWorld) vms() map[string]ServerView {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]ServerView{}
	for _, vm := range w.servers {
		out[vm.view.Name] = vm.view
	}
	return out
}

// Defect 4 of issue 17: creates that made the VM but failed before its floating IP leave nodes
// without one; the cluster is not ready until every node has it, each made once.
func TestFloatingIPsRepairedBeforeReady(t *testing.T) {
	w := newMemWorld(t, 21)
	w.failFIPs = 2
	createCluster(t, w, 3, 2, "allocate_floating_ip_to_all_nodes", true)
	vms := w.vms()
	if len(vms) != 5 {
		t.Fatalf("%d VMs", len(vms))
	}
	for name, v := range vms {
		if v.FloatingIP == "" {
			t.Errorf("%s has no floating IP, yet the cluster was declared ready", name)
		}
	}
	if n := w.calls["floating IP repaired"]; n != 2 {
		t.Errorf("%d floating IPs repaired, want the 2 that failed", n)
	}
}

// A node whose VM lost a volume or its port cannot be mended in place: it is made again (a
// server after the others are ready, one at a time), and the cluster is ready once it is back.
func TestDamagedNodesAreReplaced(t *testing.T) {
	w := newMemWorld(t, 22)
	createCluster(t, w, 3, 2, "worker_nodes_data_volume_size", 10240.0)
	before := w.vms()
	w.mu.Lock()
	for _, vm := range w.servers {
		switch vm.view.Name {
		case "prod-agent-0":
			vm.view.Volumes-- // its data volume (RKE2's data directory) detached by hand
		case "prod-server-1":
			vm.view.Address = "" // its port deleted by hand
		default:
			continue
		}
		w.clusters[testCluster].nodes[vm.view.Name].view.State = "unavailable" // its kubelet stops reporting
	}
	w.mu.Unlock()
	info, _ := createCluster(t, w, 3, 2, "worker_nodes_data_volume_size", 10240.0)
	after := w.vms()
	for name, v := range after {
		changed := before[name].ID != v.ID
		if damaged := name == "prod-agent-0" || name == "prod-server-1"; changed != damaged {
			t.Errorf("%s: VM %s → %s (damaged: %v)", name, before[name].ID, v.ID, damaged)
		}
	}
	if s, a, act := w.counts(testCluster); s != 3 || a != 2 || act != 5 || info.Metadata["stage"] != ClusterReady {
		t.Fatalf("after the repair: %d servers, %d agents, %d active; %+v", s, a, act, info)
	}
}

// Only a VM that shows some but not all of its volumes has lost one: none shown is Nova's
// policy hiding them (a root volume cannot be detached), no count recorded an older VM.
func TestMissingVolumes(t *testing.T) {
	cases := []struct {
		recorded string
		shown    int
		damaged  bool
	}{{"2", 1, true}, {"3", 2, true}, {"2", 2, false}, {"2", 0, false}, {"", 1, false}, {"x", 1, false}}
	for _, tc := range cases {
		vm := ServerView{Metadata: map[string]string{MetaVolumes: tc.recorded}, Volumes: tc.shown}
		if got := missingVolumes(vm) != ""; got != tc.damaged {
			t.Errorf("recorded %q, shown %d: damaged %v, want %v", tc.recorded, tc.shown, got, tc.damaged)
		}
	}
}
