package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/openstacksim"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/sim/simfault"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

const rke2Cluster = "halo"

// clusterServers are the cluster's Nova servers by status.
func (w *rke2World) clusterServers() (all int, byStatus map[string]int) {
	byStatus = map[string]int{}
	for _, s := range w.cloud.servers() {
		if strings.HasPrefix(s.Name, w.cluster+"-") && !s.Deleting {
			all++
			byStatus[s.Status]++
		}
	}
	return all, byStatus
}

func (w *rke2World) activeNodes() (servers, agents int) {
	for _, n := range w.rs.Nodes() {
		if n.State != "active" {
			continue
		}
		switch n.Labels["rke2.site-agent.waldur.com/role"] {
		case "server":
			servers++
		case "agent":
			agents++
		}
	}
	return servers, agents
}

func (w *rke2World) order(o waldursim.Order) waldursim.Order {
	o.OfferingUUID, o.ProjectUUID = w.offering.UUID, w.project.UUID
	return w.sim.AddOrder(o)
}

// explainOnFailure logs the agent's last lines and what the simulators hold when t fails.
// createOrder3Plus2 publishes the Create order of a 3 + 2 cluster (agents m1.large with a 20 GiB
// data volume).
func (w *rke2World) createOrder3Plus2() waldursim.Order {
	return w.order(waldursim.Order{Type: waldursim.OrderCreate, PlanUUID: w.offering.Plans[0].UUID,
		Limits:     map[string]float64{"server_nodes": 3, "worker_nodes": 2},
		Attributes: map[string]any{"name": rke2Cluster, "worker_nodes_count": 2, "worker_nodes_flavor_name": "m1.large", "worker_nodes_data_volume_size": 20480}})
}

func (w *rke2World) explainOnFailure(t testing.TB, p *proc) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		t.Logf("agent log:\n%s", tail(p.out.String()))
		w.mu.Lock()
		t.Logf("node emulator refusals: %v", w.refused)
		w.mu.Unlock()
		for _, s := range w.cloud.servers() {
			t.Logf("server %s %s", s.Name, s.Status)
		}
		for _, n := range w.rs.Nodes() {
			t.Logf("rancher node %s %s", n.Name, n.State)
		}
	})
}

// waitOrder waits until the order is done (failing on erred).
func (w *rke2World) waitOrder(t testing.TB, p *proc, o waldursim.Order, what string, timeout time.Duration) waldursim.Order {
	t.Helper()
	var got waldursim.Order
	waitFor(t, timeout, what, func() bool {
		got, _ = w.sim.Order(o.UUID)
		if got.State == waldursim.OrderErred || got.State == waldursim.OrderRejected {
			t.Fatalf("%s: order %s: %s%s", what, got.State, got.ErrorMessage, got.ProviderRejectionComment)
		}
		return got.State == waldursim.OrderDone
	})
	return got
}

// TestRKE2ClusterLifecycle drives the built binary through a cluster's life against the
// simulators, the node emulator playing the VMs: Create 3 servers + 2 agents → done with five
// VMs and five active nodes, the Vault bootstrap objects gone and the team's Keycloak group
// bound; Update to 4 agents; Update to 1 server (stepwise, drained); Terminate → nothing left
// in OpenStack, Rancher, Vault or Keycloak.
func TestRKE2ClusterLifecycle(t *testing.T) {
	w := newRKE2World(t)
	create := w.order(waldursim.Order{Type: waldursim.OrderCreate, PlanUUID: w.offering.Plans[0].UUID,
		Limits:     map[string]float64{"server_nodes": 3, "worker_nodes": 2},
		Attributes: map[string]any{"name": rke2Cluster, "worker_nodes_count": 2, "worker_nodes_flavor_name": "m1.large", "worker_nodes_data_volume_size": 20480}})
	p := w.start("-m", "order_process", "-c", w.config, "--period", "200ms")
	w.explainOnFailure(t, p)
	start := time.Now()
	got := w.waitOrder(t, p, create, "the 3 + 2 cluster", 90*time.Second)
	t.Logf("3 + 2 cluster done in %s; requests: %s", time.Since(start).Round(time.Millisecond), w.requestSummary())
	if all, st := w.clusterServers(); all != 5 || st["ACTIVE"] != 5 {
		t.Fatalf("servers %d %v, want 5 ACTIVE", all, st)
	}
	if s, a := w.activeNodes(); s != 3 || a != 2 {
		t.Fatalf("active nodes: %d servers, %d agents", s, a)
	}
	res, _ := w.sim.Resource(got.ResourceUUID)
	if res.BackendID != rke2Cluster {
		t.Fatalf("backend id %q", res.BackendID)
	}
	if w.vs.Policy("rancher-provisioning-policy-" + res.UUID) {
		t.Fatal("the bootstrap policy is left after every node registered")
	}
	if g := w.kc.Groups()["/c_halo/c_halo_cluster-member"]; strings.Join(g, ",") != "alice,bob" {
		t.Fatalf("the team's keycloak group: %v", w.kc.Groups())
	}
	if b := w.rs.ClusterRoleBindings(); len(b) != 1 || !strings.HasSuffix(b[0], "cluster-member keycloakoidc_group://c_halo_cluster-member") {
		t.Fatalf("cluster role bindings %v", b)
	}
	w.checkEtcd(t, res.UUID, 3)
	w.checkUsage(t, res.UUID)
	up := w.sim.AddOrder(waldursim.Order{Type: waldursim.OrderUpdate, ResourceUUID: res.UUID,
		Limits: map[string]float64{"server_nodes": 3, "worker_nodes": 4}})
	w.waitOrder(t, p, up, "4 agents", 60*time.Second)
	if s, a := w.activeNodes(); s != 3 || a != 4 {
		t.Fatalf("after scaling agents: %d servers, %d agents", s, a)
	}
	w.checkEtcd(t, res.UUID, 3)
	down := w.sim.AddOrder(waldursim.Order{Type: waldursim.OrderUpdate, ResourceUUID: res.UUID,
		Limits: map[string]float64{"server_nodes": 1, "worker_nodes": 4}})
	w.waitOrder(t, p, down, "1 server", 60*time.Second)
	if all, _ := w.clusterServers(); all != 5 {
		t.Fatalf("%d servers after scaling down, want 5", all)
	}
	w.checkEtcd(t, res.UUID, 1)
	term := w.sim.AddOrder(waldursim.Order{Type: waldursim.OrderTerminate, ResourceUUID: res.UUID})
	w.waitOrder(t, p, term, "terminate", 60*time.Second)
	if all, _ := w.clusterServers(); all != 0 {
		t.Fatalf("%d servers left", all)
	}
	if got := w.rs.ProvisionedClusters(); len(got) != 0 {
		t.Fatalf("rancher clusters left: %v", got)
	}
	if len(w.rs.Nodes()) != 0 || len(w.rs.ClusterRoleBindings()) != 0 || len(w.kc.Groups()) != 0 {
		t.Fatalf("left: nodes %v, bindings %v, groups %v", w.rs.Nodes(), w.rs.ClusterRoleBindings(), w.kc.Groups())
	}
}

// TestRKE2KilledMidCreateUnderFaults: with 30 % of Rancher, Nova and Vault answers failing
// (500, 502, 503, 429), the agent is SIGKILLed while the cluster is being built and started
// again; the order finishes with exactly five VMs, one per node, and five active nodes.
func TestRKE2KilledMidCreateUnderFaults(t *testing.T) {
	killedMidCreateUnderFaults(t)
}

// killedMidCreateUnderFaults is TestRKE2KilledMidCreateUnderFaults in a world made with opts;
// it returns the world once the order is done and checked.
func killedMidCreateUnderFaults(t *testing.T, opts ...rke2Option) *rke2World {
	w := newRKE2World(t, opts...)
	statusFaults := []simfault.Kind{simfault.Status500, simfault.Status502, simfault.Status503, simfault.Status429}
	w.rs.SetFaults(ranchersim.Faults{Rate: 0.3, Seed: 5, Kinds: statusFaults})
	w.os.SetFaults(openstacksim.Faults{Rate: 0.3, Seed: 6, Kinds: statusFaults})
	w.vs.SetFaults(simfault.Config{Rate: 0.3, Seed: 7, Kinds: statusFaults})
	create := w.order(waldursim.Order{Type: waldursim.OrderCreate, PlanUUID: w.offering.Plans[0].UUID,
		Limits: map[string]float64{"server_nodes": 3, "worker_nodes": 2},
		Attributes: map[string]any{"name": rke2Cluster, "worker_nodes_count": 2, "worker_nodes_flavor_name": "m1.large",
			"worker_nodes_data_volume_size": 20480}})
	args := []string{"-m", "order_process", "-c", w.config, "--period", "200ms"}
	first := w.start(args...)
	w.explainOnFailure(t, first)
	waitFor(t, 60*time.Second, "the first servers", func() bool { all, _ := w.clusterServers(); return all >= 2 })
	first.kill() // SIGKILL to the process group
	all, _ := w.clusterServers()
	t.Logf("killed with %d servers made", all)
	second := w.start(args...)
	w.explainOnFailure(t, second)
	w.waitOrder(t, second, create, "the cluster after the restart", 120*time.Second)
	names := map[string]int{}
	for _, s := range w.cloud.servers() {
		if !s.Deleting {
			names[s.Name]++
		}
	}
	if len(names) != 5 {
		t.Fatalf("servers %v, want five nodes", names)
	}
	for n, c := range names {
		if c != 1 {
			t.Fatalf("node %s has %d VMs", n, c)
		}
	}
	if s, a := w.activeNodes(); s != 3 || a != 2 {
		t.Fatalf("active nodes: %d servers, %d agents", s, a)
	}
	if len(w.rs.FaultLog()) == 0 || len(w.os.FaultLog()) == 0 || len(w.vs.FaultLog()) == 0 {
		t.Fatal("a simulator injected no fault")
	}
	return w
}
