package rke2

import "context"

// EnsureRegistrySecret implements Rancher: the in-memory world counts it (memworld_test.go).
func (m memRancher) EnsureRegistrySecret(context.Context, ClusterRef, ProvisionSpec) error {
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	return m.w.call("EnsureRegistrySecret")
}
