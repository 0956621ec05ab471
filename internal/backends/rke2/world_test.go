package rke2

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
)

// world is a tiny model of Nova + Rancher + etcd that the planner's property test drives. It
// plays RKE2's rules: a joining node registers only while the server it joins through is
// ready; a server becomes an etcd voting member once it is ready (a learner before that);
// removal drains for a while, then deletes the VM and (usually) the Rancher node.
type world struct {
	t            *testing.T
	rng          *rand.Rand
	nodes        map[string]*wnode
	failuresLeft int
	crashes      bool     // apply only a prefix of a plan's actions now and then
	viaRancher   bool     // bootstrap rancher: nodes register without a join target
	log          []string // recent events, printed on failure
}

type wnode struct {
	name     string
	inv      Inventory
	vm       string // BUILD, ACTIVE, ERROR, "" (deleted)
	rancher  string // "", registering, active, unavailable; "gone" once deleted
	boot     int    // ticks until the VM is ACTIVE
	register int    // ticks from registering to active
	drain    int    // ticks of draining left while removing
	removing bool
	member   bool // etcd voting member
	flapped  bool
}

func newWorld(t *testing.T, seed uint64) *world {
	return &world{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), nodes: map[string]*wnode{}, failuresLeft: 4}
}

func (w *world) fatalf(format string, args ...any) {
	w.t.Helper()
	tail := w.log
	if len(tail) > 30 {
		tail = tail[len(tail)-30:]
	}
	for _, l := range tail {
		w.t.Log(l)
	}
	w.t.Fatalf(format, args...)
}

func (w *world) note(format string, args ...any) { w.log = append(w.log, fmt.Sprintf(format, args...)) }

// observe returns what Nova and Rancher would show, in random order.
func (w *world) observe() []Node {
	out := make([]Node, 0, len(w.nodes))
	for _, n := range w.nodes {
		r := n.rancher
		if r == "gone" {
			r = ""
		}
		inv := n.inv
		if n.removing {
			inv.Stage = StageRemove
		}
		out = append(out, Node{Name: n.name, Inventory: inv, VM: n.vm, Rancher: r})
	}
	w.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func (w *world) ready(n *wnode) bool { return n.vm == "ACTIVE" && n.rancher == "active" }

func (w *world) liveServers() (all, ready []*wnode) {
	for _, n := range w.sorted() {
		if n.inv.Role == RoleServer && n.vm != "" {
			all = append(all, n)
			if w.ready(n) {
				ready = append(ready, n)
			}
		}
	}
	return all, ready
}

func (w *world) sorted() []*wnode {
	out := make([]*wnode, 0, len(w.nodes))
	for _, n := range w.nodes {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// serversLeaving counts servers being drained (removal in flight).
func (w *world) serversLeaving() int {
	c := 0
	for _, n := range w.nodes {
		if n.inv.Role == RoleServer && n.removing && n.vm != "" {
			c++
		}
	}
	return c
}

// quorum reports whether etcd has a majority of healthy voting members.
func (w *world) quorum() (ok bool, healthy, members int) {
	for _, n := range w.nodes {
		if n.member && n.vm != "" {
			members++
			if n.vm == "ACTIVE" && (n.rancher == "active" || n.rancher == "unavailable") {
				healthy++
			}
		}
	}
	return members == 0 || healthy >= members/2+1, healthy, members
}
