package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// TestRKE2UpgradeOrder (issue 17 item 11) drives the built binary through a Kubernetes upgrade
// against the simulators: a 3 + 2 cluster on v1.31.7, an Update order asking for a skipped
// minor (v1.33) and one asking for a downgrade are refused with the reason; one asking for
// v1.32.3 is done once Rancher has rolled every node onto it — the three servers one at a time
// first, then the agents two at a time (upgrade_agent_batch 2).
func TestRKE2UpgradeOrder(t *testing.T) {
	w := newRKE2World(t, withSettings("upgrade_agent_batch: 2\n"))
	create := w.createOrder3Plus2()
	p := w.start("-m", "order_process", "-c", w.config, "--period", "200ms")
	w.explainOnFailure(t, p)
	got := w.waitOrder(t, p, create, "the 3 + 2 cluster", 90*time.Second)
	limits := map[string]float64{"server_nodes": 3, "worker_nodes": 2}
	upgrade := func(v string) waldursim.Order {
		return w.sim.AddOrder(waldursim.Order{Type: waldursim.OrderUpdate, ResourceUUID: got.ResourceUUID, Limits: limits,
			Attributes: map[string]any{"new_options": map[string]any{"k8s_version": v}}})
	}
	for v, reason := range map[string]string{"v1.33.1+rke2r1": "v1.32", "v1.30.9+rke2r1": "downgrade"} {
		o := upgrade(v)
		var st waldursim.Order
		waitFor(t, 30*time.Second, "the order for "+v, func() bool {
			st, _ = w.sim.Order(o.UUID)
			return st.State == waldursim.OrderRejected || st.State == waldursim.OrderErred || st.State == waldursim.OrderDone
		})
		if st.State == waldursim.OrderDone || !strings.Contains(st.ProviderRejectionComment+st.ErrorMessage, reason) {
			t.Fatalf("an order for %s: %s %q %q, want refused naming %q", v, st.State, st.ProviderRejectionComment, st.ErrorMessage, reason)
		}
	}
	if log := w.rs.UpgradeLog(); len(log) != 0 {
		t.Fatalf("nodes upgraded by a refused order: %v", log)
	}
	const next = "v1.32.3+rke2r1"
	start := time.Now()
	o := upgrade(next)
	waitFor(t, 90*time.Second, "the upgrade", func() bool {
		st, _ := w.sim.Order(o.UUID)
		if st.State == waldursim.OrderErred || st.State == waldursim.OrderRejected {
			t.Fatalf("the upgrade: %s %s%s", st.State, st.ErrorMessage, st.ProviderRejectionComment)
		}
		return st.State == waldursim.OrderDone
	})
	// Counted by the simulator as it cordons each batch: sampling the nodes from here missed a
	// 150 ms batch under load.
	batches := w.rs.UpgradeBatchMax()
	maxServers, maxAgents := batches["server"], batches["agent"]
	t.Logf("upgrade done in %s; at most %d servers and %d agents cordoned at once", time.Since(start).Round(time.Millisecond), maxServers, maxAgents)
	if maxServers != 1 || maxAgents != 2 {
		t.Fatalf("at most %d servers and %d agents upgraded at once, want 1 and 2", maxServers, maxAgents)
	}
	log := w.rs.UpgradeLog()
	role := map[string]string{}
	for _, n := range w.rs.Nodes() {
		role[n.Name] = n.Labels["rke2.site-agent.waldur.com/role"]
		if n.Version != next || n.State != "active" {
			t.Fatalf("node %s: %s %s after the upgrade", n.Name, n.State, n.Version)
		}
	}
	if len(log) != 5 {
		t.Fatalf("upgrade log %v, want the five nodes once each", log)
	}
	for i, line := range log {
		f := strings.Fields(line)
		if want := map[bool]string{true: "server", false: "agent"}[i < 3]; role[f[1]] != want || f[2] != next {
			t.Fatalf("upgrade %d of %v: want a %s on %s", i, log, want, next)
		}
	}
}
