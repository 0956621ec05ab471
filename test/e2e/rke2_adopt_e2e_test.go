package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// TestRKE2AdoptsClusterWithLostMetadata (issue 17 item 13, seed 002 §7): a cluster is made;
// then Waldur loses what the agent reported — the resource's backend id and metadata — and the
// resource is renamed, as after an earlier agent whose reports never arrived; a Create order
// for the resource runs again. The agent finds the cluster by the resource's UUID (Rancher's
// label, the servers' tag) and links the resource to it: no second network, VM or Rancher
// cluster.
func TestRKE2AdoptsClusterWithLostMetadata(t *testing.T) {
	w := newRKE2World(t)
	attrs := map[string]any{"worker_nodes_count": 1, "worker_nodes_flavor_name": "m1.large", "worker_nodes_data_volume_size": 20480}
	limits := map[string]float64{"server_nodes": 1, "worker_nodes": 1}
	create := w.order(waldursim.Order{Type: waldursim.OrderCreate, PlanUUID: w.offering.Plans[0].UUID, ResourceName: rke2Cluster,
		Limits: limits, Attributes: attrs})
	p := w.start("-m", "order_process", "-c", w.config, "--period", "200ms")
	w.explainOnFailure(t, p)
	done := w.waitOrder(t, p, create, "the cluster", 90*time.Second)
	first, _ := w.sim.Resource(done.ResourceUUID)
	if first.BackendID != rke2Cluster || first.BackendMetadata["rancher_cluster_id"] == nil {
		t.Fatalf("resource after the create: %+v", first)
	}
	servers := func() []string {
		var ids []string
		for _, s := range w.os.Servers() {
			ids = append(ids, s.ID)
		}
		return ids
	}
	vms, networks := servers(), w.os.ObjectsOf(w.os.AdminProjectID()).Networks

	w.sim.ForgetBackend(done.ResourceUUID, "halo-renamed")
	again := w.sim.AddOrder(waldursim.Order{Type: waldursim.OrderCreate, ResourceUUID: done.ResourceUUID, PlanUUID: w.offering.Plans[0].UUID,
		Limits: limits, Attributes: attrs})
	w.waitOrder(t, p, again, "the Create order run again", 60*time.Second)
	res, _ := w.sim.Resource(done.ResourceUUID)
	if res.BackendID != rke2Cluster || res.BackendMetadata["rancher_cluster_id"] != first.BackendMetadata["rancher_cluster_id"] {
		t.Fatalf("resource after the second create: backend id %q, metadata %v (want %q, %v)", res.BackendID, res.BackendMetadata,
			rke2Cluster, first.BackendMetadata)
	}
	if got := w.rs.ProvisionedClusters(); !slices.Equal(got, []string{rke2Cluster}) {
		t.Fatalf("rancher clusters %v", got)
	}
	if got := servers(); !slices.Equal(got, vms) {
		t.Fatalf("servers %v, before %v", got, vms)
	}
	if n := w.os.ObjectsOf(w.os.AdminProjectID()).Networks; n != networks {
		t.Fatalf("%d networks, %d before", n, networks)
	}
}
