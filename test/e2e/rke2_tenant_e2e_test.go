package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/openstacksim"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// newRKE2TenantWorld is the simulator world with more keys in the openstack block.
func newRKE2TenantWorld(t *testing.T, extra string) (*rke2World, simCloud) {
	t.Helper()
	sim := openstacksim.New(openstacksim.Options{BuildDelay: 150 * time.Millisecond, DeleteDelay: 100 * time.Millisecond})
	sim.AddNamedImage("cirros")
	cloud := simCloud{os: sim, url: serve(t, sim, false), extra: extra}
	w := newRKE2WorldOn(t, cloud, rke2Cluster)
	w.os = sim
	return w, cloud
}

// waitSettled waits until the order is done or erred.
func (w *rke2World) waitSettled(t *testing.T, o waldursim.Order, what string, timeout time.Duration) waldursim.Order {
	t.Helper()
	var got waldursim.Order
	waitFor(t, timeout, what, func() bool {
		got, _ = w.sim.Order(o.UUID)
		return got.State == waldursim.OrderDone || got.State == waldursim.OrderErred || got.State == waldursim.OrderRejected
	})
	return got
}

// TestRKE2PerClusterTenant drives the built binary with backend_settings.openstack.tenant:
// per_cluster: a 1 + 1 cluster is made in a project of its own (and nothing in the shared
// project); a terminate while a volume someone else made is in that project fails, naming
// it, and deletes nothing; with force_destroy (the agent restarted on the new setting) the
// terminate deletes the volume, the cluster and the project.
func TestRKE2PerClusterTenant(t *testing.T) {
	w, cloud := newRKE2TenantWorld(t, "tenant: per_cluster\n")
	create := w.order(waldursim.Order{Type: waldursim.OrderCreate, PlanUUID: w.offering.Plans[0].UUID,
		Limits:     map[string]float64{"server_nodes": 1, "worker_nodes": 1},
		Attributes: map[string]any{"name": rke2Cluster, "worker_nodes_count": 1, "worker_nodes_flavor_name": "m1.large", "worker_nodes_data_volume_size": 10240}})
	p := w.start("-m", "order_process", "-c", w.config, "--period", "200ms")
	w.explainOnFailure(t, p)
	got := w.waitOrder(t, p, create, "the 1 + 1 cluster", 90*time.Second)
	t.Logf("1 + 1 cluster in its own project; requests: %s", w.requestSummary())
	proj, ok := w.os.ProjectByName("rke2-" + got.ResourceUUID)
	if !ok || w.os.ProjectCount() != 2 {
		t.Fatalf("project rke2-%s: %v; %d projects, want the admin's and the cluster's", got.ResourceUUID, ok, w.os.ProjectCount())
	}
	n := 0
	for _, s := range w.os.Servers() {
		if s.Deleting {
			continue
		}
		n++
		if s.ProjectID != proj.ID {
			t.Fatalf("server %s in project %s, not the cluster's %s", s.Name, s.ProjectID, proj.ID)
		}
	}
	if admin := w.os.ObjectsOf(w.os.AdminProjectID()); n != 2 || admin.Servers != 0 || admin.Volumes != 0 || admin.Networks != 1 {
		t.Fatalf("%d servers; the shared project holds %+v", n, admin)
	}
	vol := w.os.AddVolume(proj.ID, 5)
	term := w.sim.AddOrder(waldursim.Order{Type: waldursim.OrderTerminate, ResourceUUID: got.ResourceUUID})
	refused := w.waitSettled(t, term, "the refused terminate", 60*time.Second)
	if refused.State != waldursim.OrderErred || !strings.Contains(refused.ErrorMessage, "volume vol-") ||
		!strings.Contains(refused.ErrorMessage, vol) || !strings.Contains(refused.ErrorMessage, "force_destroy") {
		t.Fatalf("terminate with a foreign volume: %s %q, want erred naming the volume", refused.State, refused.ErrorMessage)
	}
	if all, _ := w.clusterServers(); all != 2 {
		t.Fatalf("a refused terminate left %d of the 2 servers", all)
	}
	p.kill()
	cloud.extra = "tenant: per_cluster\nforce_destroy: true\n"
	w.writeConfigOn(cloud)
	p = w.start("-m", "order_process", "-c", w.config, "--period", "200ms")
	w.explainOnFailure(t, p)
	term = w.sim.AddOrder(waldursim.Order{Type: waldursim.OrderTerminate, ResourceUUID: got.ResourceUUID})
	w.waitOrder(t, p, term, "terminate with force_destroy", 60*time.Second)
	if _, ok := w.os.ProjectByName(proj.Name); ok || w.os.ProjectCount() != 1 {
		t.Fatalf("the cluster's project is left (%d projects)", w.os.ProjectCount())
	}
	if len(w.os.Servers()) != 0 || len(w.os.Volumes("")) != 0 {
		t.Fatalf("left: servers %+v, volumes %+v", w.os.Servers(), w.os.Volumes(""))
	}
	if got := w.rs.ProvisionedClusters(); len(got) != 0 {
		t.Fatalf("rancher clusters left: %v", got)
	}
}
