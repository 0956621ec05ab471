package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/sim/simfault"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// The rke2 backend of the built binary against REAL Nova, Neutron, Cinder and Glance
// (scripts/openstack/up.sh --compute: Nova's fake driver, Cinder's fake volume driver) and
// the Waldur, Rancher, Vault and Keycloak simulators, the node emulator playing the VMs from
// each server's user data as Nova holds it. Selected in tier 2 by -run RealNova.

// realNovaWorld is an rke2World on the real cloud, for a cluster of a name of its own.
type realNovaWorld struct {
	*rke2World
	real *realCloud
}

func newRealNovaWorld(t *testing.T) *realNovaWorld {
	t.Helper()
	cloud := newRealCloud(t)
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	w := &realNovaWorld{rke2World: newRKE2WorldOn(t, cloud, "rn"+hex.EncodeToString(b)), real: cloud}
	return w
}

// createOrder asks for 3 servers and 2 agents with a 20 GB data volume each, and registers
// the cleanup of whatever the cluster leaves in OpenStack should the test fail.
func (w *realNovaWorld) createOrder(t *testing.T) waldursim.Order {
	o := w.order(waldursim.Order{Type: waldursim.OrderCreate, PlanUUID: w.offering.Plans[0].UUID,
		Limits: map[string]float64{"server_nodes": 3, "worker_nodes": 2},
		Attributes: map[string]any{"name": w.cluster, "worker_nodes_count": 2, "worker_nodes_flavor_name": "m1.large",
			"worker_nodes_data_volume_size": 20480}})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := w.real.admin.DeleteMentioning(ctx, o.ResourceUUID); err != nil {
			t.Errorf("cleanup of the cluster in OpenStack: %v", err)
		}
	})
	return o
}

// stage runs one step, logging its duration and the agent's OpenStack requests.
func (w *realNovaWorld) stage(t *testing.T, name string, run func()) {
	w.real.proxy.take()
	start := time.Now()
	run()
	n, calls := w.real.proxy.take()
	t.Logf("%-28s %6.1fs, %4d OpenStack requests (%s)", name, time.Since(start).Seconds(), n, calls)
}

// TestRKE2RealNovaLifecycle: Create 3 servers + 2 agents → done with exactly five Nova
// servers, each with a floating IP and its volumes; Update to 4 agents; Terminate → nothing
// of the cluster left in OpenStack (servers, volumes, ports, floating IPs, routers, networks,
// security groups, key pairs).
func TestRKE2RealNovaLifecycle(t *testing.T) {
	w := newRealNovaWorld(t)
	volumesBefore := w.volumes(t)
	create := w.createOrder(t)
	p := w.start("-m", "order_process", "-c", w.config, "--period", "500ms")
	w.explainOnFailure(t, p)
	var res waldursim.Resource
	w.stage(t, "create 3 + 2", func() {
		got := w.waitOrder(t, p, create, "the 3 + 2 cluster", 5*time.Minute)
		res, _ = w.sim.Resource(got.ResourceUUID)
	})
	w.checkCluster(t, res.UUID, 3, 2)
	up := w.sim.AddOrder(waldursim.Order{Type: waldursim.OrderUpdate, ResourceUUID: res.UUID,
		Limits: map[string]float64{"server_nodes": 3, "worker_nodes": 4}})
	w.stage(t, "update to 4 agents", func() { w.waitOrder(t, p, up, "4 agents", 3*time.Minute) })
	w.checkCluster(t, res.UUID, 3, 4)
	term := w.sim.AddOrder(waldursim.Order{Type: waldursim.OrderTerminate, ResourceUUID: res.UUID})
	w.stage(t, "terminate", func() { w.waitOrder(t, p, term, "terminate", 3*time.Minute) })
	w.checkNothingLeft(t, res.UUID, volumesBefore)
}

// TestRKE2RealNovaKilledMidCreate: with 30 % of real Nova's and Neutron's answers replaced by
// 500, 502, 503 or 429 (and of the Rancher and Vault simulators'), the agent is SIGKILLed
// while the cluster is being built and started again; the order finishes with exactly five
// Nova servers, one per node, and nothing orphaned (ports, floating IPs, volumes); Terminate
// then leaves nothing.
func TestRKE2RealNovaKilledMidCreate(t *testing.T) {
	w := newRealNovaWorld(t)
	volumesBefore := w.volumes(t)
	statusFaults := []simfault.Kind{simfault.Status500, simfault.Status502, simfault.Status503, simfault.Status429}
	w.real.proxy.setFaults(simfault.Config{Rate: 0.3, Seed: 11, Kinds: statusFaults}, "nova", "neutron")
	w.rs.SetFaults(ranchersim.Faults{Rate: 0.3, Seed: 5, Kinds: statusFaults})
	w.vs.SetFaults(simfault.Config{Rate: 0.3, Seed: 7, Kinds: statusFaults})
	create := w.createOrder(t)
	args := []string{"-m", "order_process", "-c", w.config, "--period", "500ms"}
	first := w.start(args...)
	w.explainOnFailure(t, first)
	start := time.Now()
	waitFor(t, 3*time.Minute, "the first servers", func() bool { all, _ := w.clusterServers(); return all >= 2 })
	first.kill() // SIGKILL to the process group
	all, _ := w.clusterServers()
	t.Logf("killed after %.1fs with %d servers made", time.Since(start).Seconds(), all)
	second := w.start(args...)
	w.explainOnFailure(t, second)
	got := w.waitOrder(t, second, create, "the cluster after the restart", 6*time.Minute)
	t.Logf("done %.1fs after the first start; faults injected into real OpenStack answers: %d", time.Since(start).Seconds(), len(w.real.proxy.faultLog()))
	w.checkCluster(t, got.ResourceUUID, 3, 2)
	if len(w.real.proxy.faultLog()) == 0 || len(w.rs.FaultLog()) == 0 || len(w.vs.FaultLog()) == 0 {
		t.Fatal("an upstream had no fault injected")
	}
	w.real.proxy.setFaults(simfault.Config{}, "nova", "neutron")
	term := w.sim.AddOrder(waldursim.Order{Type: waldursim.OrderTerminate, ResourceUUID: got.ResourceUUID})
	w.waitOrder(t, second, term, "terminate", 3*time.Minute)
	w.checkNothingLeft(t, got.ResourceUUID, volumesBefore)
}

// checkCluster: exactly one ACTIVE Nova server per node, each with its pre-made port, a
// floating IP and its volumes (a system volume, and a data volume on agents), no other
// port, floating IP or volume of the cluster, and the nodes active in Rancher.
func (w *realNovaWorld) checkCluster(t *testing.T, uuid string, servers, agents int) {
	t.Helper()
	ctx := w.real.ctx
	all, err := w.real.admin.Servers(ctx, rke2.ClusterTag(uuid))
	if err != nil {
		t.Fatal(err)
	}
	names, volumes := map[string]int{}, 0
	for _, s := range all {
		names[s.Name]++
		if s.Status != "ACTIVE" {
			t.Errorf("server %s is %s", s.Name, s.Status)
		}
		volumes += len(s.AttachedVolumes)
	}
	if len(all) != servers+agents || len(names) != servers+agents {
		t.Fatalf("Nova servers of the cluster: %v, want %d, one per node", names, servers+agents)
	}
	if want := servers + 2*agents; volumes != want {
		t.Errorf("%d volumes attached, want %d", volumes, want)
	}
	objs, err := w.real.admin.Mentioning(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.Kind]++
		if o.Kind == "port" && strings.Contains(o.Detail, `""`) {
			t.Errorf("unbound port: %s", o)
		}
	}
	n := servers + agents
	if kinds["port"] != n || kinds["floating IP"] != n || kinds["router"] != 1 || kinds["network"] != 1 || kinds["security group"] != 1 {
		t.Errorf("objects of the cluster: %v, want %d ports and floating IPs, one router, network and security group:\n%v", kinds, n, objs)
	}
	if s, a := w.activeNodes(); s != servers || a != agents {
		t.Errorf("active Rancher nodes: %d servers, %d agents", s, a)
	}
}

// checkNothingLeft: nothing mentions the cluster, and the project has the volumes it had.
func (w *realNovaWorld) checkNothingLeft(t *testing.T, uuid string, volumesBefore []string) {
	t.Helper()
	if left, err := w.real.admin.Mentioning(w.real.ctx, uuid); err != nil || len(left) > 0 {
		t.Fatalf("left in OpenStack after terminate: %v (%v)", left, err)
	}
	waitFor(t, time.Minute, "the cluster's volumes deleted", func() bool { return slices.Equal(w.volumes(t), volumesBefore) })
	if got := w.rs.ProvisionedClusters(); len(got) != 0 {
		t.Fatalf("rancher clusters left: %v", got)
	}
}

func (w *realNovaWorld) volumes(t *testing.T) []string {
	ids, err := w.real.admin.VolumeIDs(w.real.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}
