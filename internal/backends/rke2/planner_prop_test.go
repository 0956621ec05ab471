package rke2

import (
	"fmt"
	"testing"
)

const testCluster = "0123456789abcdef0123456789abcdef"

// TestPlannerConverges drives the planner against the world model from random starts with
// random scale requests and faults. Safety is asserted in world.apply as each action is taken
// (no agent before a server is ready, no joining server before the initial one, joining only
// through a ready staying server, one server removal at a time, only while every server is
// ready); quorum is checked after every step; and every run must converge to the last
// requested counts once faults stop. In half the runs the agent "dies" part-way through a
// pass (only a prefix of the actions happens) and the next pass must carry on safely.
func TestPlannerConverges(t *testing.T) {
	runs := 400
	if testing.Short() {
		runs = 60
	}
	for seed := range uint64(runs) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runWorld(t, seed) })
	}
}

func randomDesired(w *world) Desired {
	return Desired{Cluster: testCluster, Name: "c", Servers: []int{1, 3, 5}[w.rng.IntN(3)], Agents: 1 + w.rng.IntN(6)}
}

func runWorld(t *testing.T, seed uint64) {
	w := newWorld(t, seed)
	w.crashes = seed%2 == 1    // half the runs lose the rest of a pass now and then
	w.viaRancher = seed%4 >= 2 // half the runs bootstrap through Rancher (no join targets)
	d := randomDesired(w)
	d.ViaRancher = w.viaRancher
	const chaos, limit = 120, 600
	for step := range limit {
		if step < chaos && w.rng.IntN(25) == 0 {
			d = randomDesired(w)
			d.ViaRancher = w.viaRancher
			w.note("step %d: scale to %d servers, %d agents", step, d.Servers, d.Agents)
		}
		p := PlanPass(d, w.observe())
		if len(p.Refusals) > 0 {
			w.fatalf("step %d: refused: %v", step, p.Refusals)
		}
		if p.Done {
			if step < chaos {
				w.tick(true)
				continue
			}
			w.checkFinal(d)
			return
		}
		w.apply(p)
		if ok, h, m := w.quorum(); !ok {
			w.fatalf("step %d: etcd below quorum after the plan: %d healthy of %d members", step, h, m)
		}
		w.tick(step < chaos)
	}
	w.fatalf("no convergence to %d servers / %d agents after %d steps; last plan: %+v", d.Servers, d.Agents, limit, PlanPass(d, w.observe()))
}

func (w *world) checkFinal(d Desired) {
	w.t.Helper()
	servers, agents := 0, 0
	for _, n := range w.nodes {
		if !w.ready(n) || n.removing {
			w.fatalf("done, but %s is not ready (vm %s, rancher %s)", n.name, n.vm, n.rancher)
		}
		if n.inv.Role == RoleServer {
			servers++
		} else {
			agents++
		}
	}
	if servers != d.Servers || agents != d.Agents {
		w.fatalf("done with %d servers and %d agents, want %d and %d", servers, agents, d.Servers, d.Agents)
	}
}

// TestPlannerFromRandomStates starts from arbitrary observed node sets (as a crash could leave
// them) and checks that a single pass never breaks the rules on its own.
func TestPlannerFromRandomStates(t *testing.T) {
	vms := []string{"BUILD", "ACTIVE", "ACTIVE", "ACTIVE", "ERROR", "SHUTOFF", ""}
	ranchers := []string{"", "registering", "active", "active", "active", "unavailable", "error"}
	for seed := range uint64(2000) {
		w := newWorld(t, seed)
		var nodes []Node
		for i := range w.rng.IntN(12) {
			role := RoleServer
			if w.rng.IntN(2) == 0 {
				role = RoleAgent
			}
			inv := Inventory{Cluster: testCluster, Role: role, Initial: role == RoleServer && i == 0, Stage: StageInstall, Index: i}
			if w.rng.IntN(8) == 0 {
				inv.Stage = StageRemove
			}
			if !inv.Initial && w.rng.IntN(2) == 0 {
				inv.Join = NodeName("c", RoleServer, w.rng.IntN(3))
			}
			nodes = append(nodes, Node{Name: NodeName("c", role, i), Inventory: inv, VM: vms[w.rng.IntN(len(vms))], Rancher: ranchers[w.rng.IntN(len(ranchers))]})
		}
		d := randomDesired(w)
		checkOnePass(t, seed, d, nodes, PlanPass(d, nodes))
	}
}

func checkOnePass(t *testing.T, seed uint64, d Desired, nodes []Node, p Plan) {
	t.Helper()
	byName := map[string]Node{}
	readyServers, servers, started := 0, 0, 0
	for _, n := range nodes {
		byName[n.Name] = n
		if n.Role == RoleServer && n.VM != "" {
			servers++
			if HealthOf(&n) == Ready {
				readyServers++
			}
		}
	}
	for _, a := range p.Actions {
		n := byName[a.Node]
		switch {
		case a.Kind == Create && !a.Inventory.Initial && readyServers == 0:
			t.Fatalf("seed %d: %s created with no ready server: %+v", seed, a.Node, nodes)
		case a.Kind == Create && a.Inventory.Initial && servers > 0:
			t.Fatalf("seed %d: initial server created while servers exist: %+v", seed, nodes)
		case a.Kind == Create && a.Inventory.Join != "" && HealthOf(ptr(byName[a.Inventory.Join])) != Ready:
			t.Fatalf("seed %d: %s joins through %s, which is not ready", seed, a.Node, a.Inventory.Join)
		case (a.Kind == Remove || a.Kind == Replace) && n.Role == RoleServer && n.Stage != StageRemove:
			started++
		}
	}
	if started > 1 || (started == 1 && countStageRemoveServers(nodes) > 0) {
		t.Fatalf("seed %d: the plan starts a second server removal: %+v\nplan %+v", seed, nodes, p.Actions)
	}
}

func countStageRemoveServers(nodes []Node) int {
	c := 0
	for _, n := range nodes {
		if n.Role == RoleServer && n.Stage == StageRemove && n.VM != "" {
			c++
		}
	}
	return c
}

func ptr(n Node) *Node { return &n }
