package rke2

import (
	"sort"
	"time"
)

// The in-memory world's day two (memworld_test.go): Rancher rolling an upgrade through the
// nodes, and nodes whose kubelet stops reporting.

// rollUpgradeLocked upgrades one node of c a tick to the release the cluster was asked for,
// servers first, as Rancher does with a concurrency of one; the node is cordoned for the tick
// before (w.mu held).
func (w *memWorld) rollUpgradeLocked(c *memCluster) {
	var todo []*memNode
	for _, n := range c.nodes {
		if n.view.Version != "" && n.view.Version != c.spec.K8sVersion {
			todo = append(todo, n)
		}
	}
	sort.Slice(todo, func(i, j int) bool {
		ri, rj := todo[i].view.Labels[LabelRole] == "server", todo[j].view.Labels[LabelRole] == "server"
		if ri != rj {
			return ri
		}
		return todo[i].view.Name < todo[j].view.Name
	})
	if len(todo) == 0 {
		return
	}
	n := todo[0]
	if n.view.State != "cordoned" {
		n.view.State = "cordoned"
		return
	}
	n.view.Version, n.view.State = c.spec.K8sVersion, "active"
	w.upgraded = append(w.upgraded, n.view.Name)
}

// setReady makes a node's kubelet report (or stop reporting): NotReady shows as Rancher's
// "unavailable" with the Ready condition Unknown since now.
func (w *memWorld) setReady(cluster, node string, ready bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.clusters[cluster].nodes[node]
	if ready {
		n.view.State, n.view.Ready = "active", "True"
	} else {
		n.view.State, n.view.Ready = "unavailable", "Unknown"
	}
	n.view.ReadySince = w.now
}

// setVM sets a node's VM status (ERROR, SHUTOFF, …); a VM that stopped running takes its
// kubelet with it: the node turns NotReady.
func (w *memWorld) setVM(node, status string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, vm := range w.servers {
		if vm.view.Name != node {
			continue
		}
		vm.view.Status = status
		inv, _, _ := InventoryFromMetadata(vm.view.Metadata)
		if n := w.clusters[inv.Cluster].nodes[node]; n != nil && status != "ACTIVE" {
			n.view.State, n.view.Ready, n.view.ReadySince = "unavailable", "Unknown", w.now
		}
	}
}

// advance moves the world's clock without anything else happening.
func (w *memWorld) advance(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.now = w.now.Add(d)
}
