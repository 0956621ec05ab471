package rke2

import (
	"context"
	"strings"
	"testing"
)

// serverUserData is the user data of every server VM of the cluster, by name.
func (w *memWorld) serverUserData(cluster string) map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]string{}
	for _, vm := range w.servers {
		if inv, _, _ := InventoryFromMetadata(vm.view.Metadata); inv.Cluster == cluster && inv.Role == RoleServer {
			out[vm.view.Name] = vm.userData
		}
	}
	return out
}

// Defect 1 of issue 17, bootstrap rke2: every server's config.yaml carries the pod and service
// networks the cluster was made with — the settings' for a new cluster, none (RKE2's defaults)
// for a cluster made before they were recorded, whatever the settings say now.
func TestServersGetTheClusterNetworks(t *testing.T) {
	w := newMemWorld(t, 11)
	createCluster(t, w, 3, 1, "bootstrap", "rke2", "cluster_cidr", "10.244.0.0/16", "service_cidr", "10.96.0.0/12")
	uds := w.serverUserData(testCluster)
	if len(uds) != 3 {
		t.Fatalf("%d servers", len(uds))
	}
	for name, ud := range uds {
		if !strings.Contains(ud, "printf 'cluster-cidr: %s\\n' '10.244.0.0/16'") || !strings.Contains(ud, "printf 'service-cidr: %s\\n' '10.96.0.0/12'") {
			t.Fatalf("%s's user data lacks the cluster's networks:\n%s", name, ud)
		}
	}

	old := newMemWorld(t, 12)
	createCluster(t, old, 1, 1, "bootstrap", "rke2")
	old.mu.Lock()
	old.clusters[testCluster].spec.ClusterCIDR, old.clusters[testCluster].spec.ServiceCIDR = "", "" // made by an older agent
	old.mu.Unlock()
	scaleCluster(t, old, 3, 1, "bootstrap", "rke2", "cluster_cidr", "10.244.0.0/16", "service_cidr", "10.96.0.0/12")
	for name, ud := range old.serverUserData(testCluster) {
		if name != "prod-server-0" && (strings.Contains(ud, "cluster-cidr") || strings.Contains(ud, "service-cidr")) {
			t.Fatalf("%s joins a cluster made with RKE2's default networks but is given others:\n%s", name, ud)
		}
	}
}

// scaleCluster sets the cluster's counts with SetLimits until done.
func scaleCluster(t *testing.T, w *memWorld, servers, agents int, kv ...any) {
	t.Helper()
	res := clusterResource(servers, agents)
	res.BackendID = "prod"
	cyclesUntilDone(t, w, "scale", func() error {
		return memBackend(t, w, kv...).SetLimits(context.Background(), res, res.Limits)
	})
}

// Bootstrap rancher: a call that creates nodes first brings the registry secret in step.
func TestNodesCreatedAfterTheRegistrySecret(t *testing.T) {
	w := newMemWorld(t, 13)
	createCluster(t, w, 1, 1)
	if n := w.calls["EnsureRegistrySecret"]; n < 2 {
		t.Fatalf("EnsureRegistrySecret called %d times for two creating calls", n)
	}
}
