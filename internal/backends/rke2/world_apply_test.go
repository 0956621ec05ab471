package rke2

// apply carries out a plan's actions, asserting the planner's safety properties at the moment
// each action is taken.
func (w *world) apply(p Plan) {
	w.t.Helper()
	actions := p.Actions
	if w.crashes && len(actions) > 0 && w.rng.IntN(6) == 0 { // the agent dies part-way through the pass
		actions = actions[:w.rng.IntN(len(actions))]
		w.note("crash after %d of %d actions", len(actions), len(p.Actions))
	}
	for _, a := range actions {
		w.note("action %s %s (%s) join=%q", a.Kind, a.Node, a.Reason, a.Inventory.Join)
		switch a.Kind {
		case Create:
			w.create(a)
		case Remove:
			w.remove(a)
		case Replace:
			w.replace(a)
		case Forget:
			n := w.nodes[a.Node]
			if n == nil || n.vm != "" {
				w.fatalf("forget %s: the node has a VM or does not exist", a.Node)
			}
			delete(w.nodes, a.Node)
		}
	}
}

func (w *world) create(a Action) {
	w.t.Helper()
	if _, dup := w.nodes[a.Node]; dup {
		w.fatalf("create %s: a node with that name exists", a.Node)
	}
	all, ready := w.liveServers()
	inv := a.Inventory
	switch {
	case inv.Role == RoleServer && inv.Initial:
		if len(all) > 0 {
			w.fatalf("create initial server %s while servers exist", a.Node)
		}
	case len(ready) == 0:
		w.fatalf("create %s %s before any server is ready", inv.Kind(), inv.Role)
	default:
		t := w.nodes[inv.Join]
		if w.viaRancher != (inv.Join == "") {
			w.fatalf("create %s with join target %q (via Rancher: %v)", a.Node, inv.Join, w.viaRancher)
		}
		if inv.Join != "" && (t == nil || !w.ready(t) || t.removing || t.inv.Role != RoleServer) {
			w.fatalf("create %s joining through %q, which is not a ready, staying server", a.Node, inv.Join)
		}
		if len(ready) != len(all) { // agents wait for the control plane; servers join one by one
			w.fatalf("create %s %s while a server is not ready", inv.Kind(), a.Node)
		}
	}
	w.nodes[a.Node] = &wnode{name: a.Node, inv: inv, vm: "BUILD", boot: 1 + w.rng.IntN(3), register: 1 + w.rng.IntN(3)}
}

func (w *world) remove(a Action) {
	w.t.Helper()
	n := w.nodes[a.Node]
	if n == nil {
		w.fatalf("remove %s: no such node", a.Node)
	}
	if n.removing {
		return // continuing a removal
	}
	if n.inv.Role == RoleServer {
		if w.serversLeaving() > 0 {
			w.fatalf("remove server %s while another server removal is in flight", a.Node)
		}
		all, ready := w.liveServers()
		if len(ready) != len(all) {
			w.fatalf("remove server %s while not every server is ready (%d of %d)", a.Node, len(ready), len(all))
		}
		if len(all) <= 1 {
			w.fatalf("remove the last server %s", a.Node)
		}
		for _, o := range w.nodes {
			if o.inv.Join == a.Node && o.vm != "" && (o.rancher == "" || o.rancher == "registering") {
				w.fatalf("remove server %s while %s is still joining through it", a.Node, o.name)
			}
		}
	}
	n.removing = true
	n.drain = w.rng.IntN(3)
}

func (w *world) replace(a Action) {
	w.t.Helper()
	n := w.nodes[a.Node]
	if n == nil {
		w.fatalf("replace %s: no such node", a.Node)
	}
	if n.inv.Role == RoleServer && !n.removing && w.serversLeaving() > 0 {
		w.fatalf("replace server %s while a server removal is in flight", a.Node)
	}
	n.vm = ""
	n.member = false
	if w.rng.IntN(2) == 0 { // the Rancher node is sometimes left behind (a crash): forget it later
		delete(w.nodes, a.Node)
	}
}

// tick advances time: VMs boot, nodes register (only through a ready server), removals drain
// and finish, and random faults happen.
func (w *world) tick(faults bool) {
	for _, n := range w.sorted() {
		if n.flapped {
			n.rancher, n.flapped = "active", false
		}
		switch {
		case n.vm == "" || n.vm == "ERROR":
		case n.removing:
			if n.drain--; n.drain < 0 {
				n.vm, n.member = "", false
				if w.rng.IntN(3) > 0 {
					delete(w.nodes, n.name)
				}
			}
		case n.vm == "BUILD":
			if n.boot--; n.boot <= 0 {
				n.vm, n.rancher = "ACTIVE", "registering"
			}
		case n.rancher == "registering":
			w.register(n)
		}
	}
	if faults {
		w.fault()
	}
}

func (w *world) register(n *wnode) {
	if !n.inv.Initial {
		t := w.nodes[n.inv.Join]
		if n.inv.Join != "" && (t == nil || !w.ready(t)) {
			return // RKE2 refuses to join through a server that is not up
		}
		if _, ready := w.liveServers(); n.inv.Join == "" && len(ready) == 0 {
			return // via Rancher: no control plane to join yet
		}
	}
	if n.register--; n.register <= 0 {
		n.rancher = "active"
		if n.inv.Role == RoleServer {
			n.member = true
		}
	}
}

// fault puts a random node's VM into ERROR (never so that etcd loses quorum) or makes a ready
// node look unavailable to Rancher for one tick.
func (w *world) fault() {
	nodes := w.sorted()
	if len(nodes) == 0 || w.rng.IntN(10) != 0 {
		return
	}
	n := nodes[w.rng.IntN(len(nodes))]
	if n.vm != "ACTIVE" && n.vm != "BUILD" {
		return
	}
	if w.rng.IntN(2) == 0 && w.ready(n) {
		n.rancher, n.flapped = "unavailable", true
		w.note("fault: %s unavailable for a tick", n.name)
		return
	}
	if w.failuresLeft == 0 {
		return
	}
	prev := n.vm
	n.vm = "ERROR"
	ok1, _, _ := w.quorum()
	if ok2, _, _ := w.quorumAfterLeaving(); !ok1 || !ok2 {
		n.vm = prev
		return
	}
	w.failuresLeft--
	w.note("fault: %s VM ERROR", n.name)
}

// quorumAfterLeaving is quorum counting draining servers as already gone.
func (w *world) quorumAfterLeaving() (bool, int, int) {
	healthy, members := 0, 0
	for _, n := range w.nodes {
		if n.member && n.vm != "" && !n.removing {
			members++
			if n.vm == "ACTIVE" {
				healthy++
			}
		}
	}
	return members == 0 || healthy >= members/2+1, healthy, members
}
