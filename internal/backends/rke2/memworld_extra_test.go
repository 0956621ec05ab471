package rke2

import (
	"context"
	"fmt"
	"strconv"

	"github.com/waldur/site-agent/internal/failure"
)

// More of the in-memory world (memworld_test.go): the registry secret, and the parts of a VM's
// shape the executor checks — its volumes and floating IP.

// EnsureRegistrySecret implements Rancher: the in-memory world counts it.
func (m memRancher) EnsureRegistrySecret(context.Context, ClusterRef, ProvisionSpec) error {
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	return m.w.call("EnsureRegistrySecret")
}

// floatingIP finishes a create: the VM records how many volumes it was made with and is
// attached to them all, and gets its floating IP when asked — unless failFIPs says the
// request fails after the VM was made (w.mu held).
func (w *memWorld) floatingIP(v ServerView, req ServerRequest) (ServerView, error) {
	vm := w.servers[v.ID]
	vm.view.Metadata[MetaVolumes] = strconv.Itoa(1 + len(req.Node.DataVolumes))
	vm.view.Volumes = 1 + len(req.Node.DataVolumes)
	if req.FloatingIP {
		if w.failFIPs > 0 {
			w.failFIPs--
			return ServerView{}, failure.Transient(fmt.Errorf("create floating IP for %s: 500 internal server error", req.Name))
		}
		vm.view.FloatingIP = "203.0.113." + strconv.Itoa(w.seq)
	}
	return vm.view, nil
}

// RepairNode implements Infra: a VM without an address has lost its port; a missing floating
// IP is made.
func (m memInfra) RepairNode(_ context.Context, _ ClusterRef, _ NetworkInfo, s ServerView, floatingIP bool) (string, error) {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("RepairNode"); err != nil {
		return "", err
	}
	vm := w.servers[s.ID]
	if vm == nil {
		return "", fmt.Errorf("server %s: %w", s.ID, failure.ErrNotFound)
	}
	if vm.view.Address == "" {
		return "has no port on the cluster network", nil
	}
	if floatingIP && vm.view.FloatingIP == "" {
		w.seq++
		vm.view.FloatingIP = "203.0.113." + strconv.Itoa(w.seq)
		w.calls["floating IP repaired"]++
	}
	return "", nil
}

// ClusterOf implements Rancher.
func (m memRancher) ClusterOf(_ context.Context, uuid string) (string, error) {
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	if err := m.w.call("ClusterOf"); err != nil {
		return "", err
	}
	if cl := m.w.clusters[uuid]; cl != nil && cl.deleting == 0 {
		return cl.ref.Name, nil
	}
	return "", nil
}

// view is the cluster as the Rancher port shows it, with the networks it was made with.
func (c *memCluster) view() RancherCluster {
	return RancherCluster{Name: c.ref.Name, ManagementID: c.mgmtID, State: c.state(), ClusterCIDR: c.spec.ClusterCIDR, ServiceCIDR: c.spec.ServiceCIDR}
}
