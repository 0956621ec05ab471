package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// checkRKE2Joins fails t when the emulated RKE2 clusters refused a join, a joining node pointed
// at an address that was no live server VM's, or the cluster agent could not report.
func (w *rke2World) checkRKE2Joins(t *testing.T, phase string) {
	t.Helper()
	if p := w.rke2.problems(); len(p) > 0 {
		t.Fatalf("%s: the RKE2 clusters saw:\n  %s", phase, strings.Join(p, "\n  "))
	}
}

// checkEtcd fails t unless the cluster's etcd (emulated, or in tier 2 the real members' own
// list) has want members, all live voters — a server removed without its member leaves a dead
// one — and never lost quorum nor (tier 2) failed writes for longer than an election.
func (w *rke2World) checkEtcd(t *testing.T, uuid string, want int) {
	t.Helper()
	m := w.rke2.members(uuid)
	if len(m) != want || strings.Contains(strings.Join(m, " "), "(") {
		t.Fatalf("etcd members %v, want %d live voters", m, want)
	}
	if ok, failed, real := w.rke2.etcdWrites(uuid); real {
		t.Logf("etcd members %v; the writer: %d writes, %d failed", m, ok, failed)
	}
	w.checkRKE2Joins(t, "etcd")
}

// joinSecret is the cluster's Vault secret (nil when gone).
func (w *rke2World) joinSecret(uuid string) map[string]any {
	return w.vs.Secret("secret/rancher/cluster-" + uuid)
}

// checkNoSecretsInUserData: no VM's user data holds the join token or the import URL.
func (w *rke2World) checkNoSecretsInUserData(t *testing.T, uuid string) {
	t.Helper()
	sec := w.joinSecret(uuid)
	for _, s := range w.os.Servers() {
		for _, k := range []string{"token", "import_url"} {
			if v, _ := sec[k].(string); v == "" || strings.Contains(s.UserData, v) {
				t.Fatalf("%s: the secret's %s is empty or in the user data", s.Name, k)
			}
		}
	}
}

// TestRKE2BootstrapLifecycle drives the built binary through a bootstrap-rke2 cluster's life:
// RKE2 installed from cloud-init (the initial server without server:, every other node through
// a live server with the cluster's join token from Vault), the cluster imported into Rancher by
// the import manifest its servers apply. Create 3 + 2 → five VMs, five active nodes, the join
// token kept in Vault without the bootstrap access; Update to 4 agents (same token); Update to
// 1 server stepwise (no node joins through a leaving server); Terminate → nothing left in
// OpenStack, Rancher, Vault (the join token too) or Keycloak.
func TestRKE2BootstrapLifecycle(t *testing.T) {
	w := newRKE2World(t, withBootstrap("rke2"))
	create := w.order(waldursim.Order{Type: waldursim.OrderCreate, PlanUUID: w.offering.Plans[0].UUID,
		Limits:     map[string]float64{"server_nodes": 3, "worker_nodes": 2},
		Attributes: map[string]any{"name": rke2Cluster, "worker_nodes_count": 2, "worker_nodes_flavor_name": "m1.large", "worker_nodes_data_volume_size": 20480}})
	p := w.start("-m", "order_process", "-c", w.config, "--period", "200ms")
	w.explainOnFailure(t, p)
	t.Cleanup(func() {
		t.Logf("joins:\n  %s", strings.Join(w.rke2.joinLog(), "\n  "))
		if t.Failed() {
			t.Logf("RKE2 refusals and agent report failures:\n  %s", strings.Join(w.rke2.problems(), "\n  "))
		}
	})
	start := time.Now()
	got := w.waitOrder(t, p, create, "the 3 + 2 cluster", 90*time.Second)
	t.Logf("3 + 2 cluster done in %s; requests: %s", time.Since(start).Round(time.Millisecond), w.requestSummary())
	if all, st := w.clusterServers(); all != 5 || st["ACTIVE"] != 5 {
		t.Fatalf("servers %d %v, want 5 ACTIVE", all, st)
	}
	if s, a := w.activeNodes(); s != 3 || a != 2 {
		t.Fatalf("active nodes: %d servers, %d agents", s, a)
	}
	w.checkRKE2Joins(t, "create")
	if j := w.rke2.joinLog(); len(j) != 4 {
		t.Fatalf("%d joining nodes, want 4: %v", len(j), j)
	}
	res, _ := w.sim.Resource(got.ResourceUUID)
	if w.vs.Policy("rancher-provisioning-policy-"+res.UUID) || w.vs.Role("approle/rancher-provisioning-role-"+res.UUID) {
		t.Fatal("the bootstrap policy or AppRole is left after every node registered")
	}
	token, _ := w.joinSecret(res.UUID)["token"].(string)
	if len(token) != 64 {
		t.Fatal("the join token secret is not kept after the create")
	}
	w.checkNoSecretsInUserData(t, res.UUID)
	importURL, _ := w.joinSecret(res.UUID)["import_url"].(string)
	defer func() { // nothing of the secret in the agent's log, to the end
		if log := p.out.String(); strings.Contains(log, token) || strings.Contains(log, importURL) {
			t.Error("the agent's log holds the join token or the import URL")
		}
	}()
	if g := w.kc.Groups()["/c_halo/c_halo_cluster-member"]; strings.Join(g, ",") != "alice,bob" {
		t.Fatalf("the team's keycloak group: %v", w.kc.Groups())
	}
	w.checkEtcd(t, res.UUID, 3)
	w.checkUsage(t, res.UUID)

	start = time.Now()
	up := w.sim.AddOrder(waldursim.Order{Type: waldursim.OrderUpdate, ResourceUUID: res.UUID,
		Limits: map[string]float64{"server_nodes": 3, "worker_nodes": 4}})
	w.waitOrder(t, p, up, "4 agents", 60*time.Second)
	t.Logf("agents 2 → 4 in %s", time.Since(start).Round(time.Millisecond))
	if s, a := w.activeNodes(); s != 3 || a != 4 {
		t.Fatalf("after scaling agents: %d servers, %d agents", s, a)
	}
	w.checkRKE2Joins(t, "scale agents") // the new agents joined with the cluster's token
	w.checkEtcd(t, res.UUID, 3)
	if now, _ := w.joinSecret(res.UUID)["token"].(string); now != token {
		t.Fatal("the join token changed with the scale-up")
	}

	start = time.Now()
	down := w.sim.AddOrder(waldursim.Order{Type: waldursim.OrderUpdate, ResourceUUID: res.UUID,
		Limits: map[string]float64{"server_nodes": 1, "worker_nodes": 4}})
	w.waitOrder(t, p, down, "1 server", 60*time.Second)
	t.Logf("servers 3 → 1 in %s", time.Since(start).Round(time.Millisecond))
	if all, _ := w.clusterServers(); all != 5 {
		t.Fatalf("%d servers after scaling down, want 5", all)
	}
	if s, a := w.activeNodes(); s != 1 || a != 4 {
		t.Fatalf("after scaling servers down: %d servers, %d agents", s, a)
	}
	w.checkRKE2Joins(t, "scale servers down")
	w.checkEtcd(t, res.UUID, 1)

	start = time.Now()
	term := w.sim.AddOrder(waldursim.Order{Type: waldursim.OrderTerminate, ResourceUUID: res.UUID})
	w.waitOrder(t, p, term, "terminate", 60*time.Second)
	t.Logf("terminate in %s", time.Since(start).Round(time.Millisecond))
	if all, _ := w.clusterServers(); all != 0 {
		t.Fatalf("%d servers left", all)
	}
	if got := w.rs.ProvisionedClusters(); len(got) != 0 {
		t.Fatalf("rancher clusters left: %v", got)
	}
	if len(w.rs.Nodes()) != 0 || len(w.rs.ClusterRoleBindings()) != 0 || len(w.kc.Groups()) != 0 {
		t.Fatalf("left: nodes %v, bindings %v, groups %v", w.rs.Nodes(), w.rs.ClusterRoleBindings(), w.kc.Groups())
	}
	if w.joinSecret(res.UUID) != nil || w.vs.Policy("rancher-provisioning-policy-"+res.UUID) {
		t.Fatal("vault objects (the join token) left after terminate")
	}
}

// TestRKE2BootstrapKilledMidCreateUnderFaults: TestRKE2KilledMidCreateUnderFaults with
// bootstrap rke2 — 30 % of Rancher, Nova and Vault answers failing and a SIGKILL mid-create end
// with five VMs, five active nodes that all joined with one join token through live servers.
func TestRKE2BootstrapKilledMidCreateUnderFaults(t *testing.T) {
	w := killedMidCreateUnderFaults(t, withBootstrap("rke2"))
	w.checkRKE2Joins(t, "create under faults")
	if j := w.rke2.joinLog(); len(j) != 4 {
		t.Fatalf("%d joins, want 4: %v", len(j), j)
	}
}
