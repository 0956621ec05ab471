package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// TestRKE2ServerReplaced: a joining server's VM goes to Nova ERROR (its machine, its kubelet and
// its etcd member die) just as an Update to 3 agents comes; the agent has the dead member
// removed, deletes the VM, makes the server again — it joins etcd afresh — and only then adds
// the agent. The cluster ends with three live etcd members and no moment without quorum; in
// tier 2 with real etcd members, a writer that never failed for longer than an election.
func TestRKE2ServerReplaced(t *testing.T) {
	w := newRKE2World(t, withBootstrap("rke2"))
	create := w.createOrder3Plus2()
	p := w.start("-m", "order_process", "-c", w.config, "--period", "200ms")
	w.explainOnFailure(t, p)
	got := w.waitOrder(t, p, create, "the 3 + 2 cluster", 90*time.Second)
	res, _ := w.sim.Resource(got.ResourceUUID)
	w.checkEtcd(t, res.UUID, 3)
	broken := ""
	for _, s := range w.os.Servers() {
		if s.Name == rke2Cluster+"-server-1" {
			broken = s.ID
		}
	}
	if broken == "" || !w.os.SetServerStatus(broken, "ERROR") {
		t.Fatal("no server-1 VM to break")
	}
	waitFor(t, 10*time.Second, "server-1's member dead", func() bool {
		return strings.Contains(strings.Join(w.rke2.members(res.UUID), " "), rke2Cluster+"-server-1(dead)")
	})
	start := time.Now()
	up := w.sim.AddOrder(waldursim.Order{Type: waldursim.OrderUpdate, ResourceUUID: res.UUID,
		Limits: map[string]float64{"server_nodes": 3, "worker_nodes": 3}})
	w.waitOrder(t, p, up, "server-1 replaced and a third agent", 90*time.Second)
	t.Logf("server-1 replaced and the agent added in %s", time.Since(start).Round(time.Millisecond))
	for _, s := range w.os.Servers() {
		if s.ID == broken {
			t.Fatal("the broken VM is still there")
		}
	}
	if s, a := w.activeNodes(); s != 3 || a != 3 {
		t.Fatalf("active nodes: %d servers, %d agents", s, a)
	}
	w.checkEtcd(t, res.UUID, 3)
}
