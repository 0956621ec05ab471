package rke2

import (
	"fmt"
	"sort"
	"strings"
)

// bootstrap makes sure a ready server exists. It returns false when nothing beyond it may
// happen in this pass: the initial server is being created or is not ready yet.
func (p *pass) bootstrap() bool {
	if anyHealth(p.servers, Ready) {
		return true
	}
	if len(p.servers) > 0 {
		names := make([]string, 0, len(p.servers))
		failed := false
		for _, n := range p.servers {
			names = append(names, describe(n))
			failed = failed || HealthOf(n) == Failed
		}
		if failed && !anyHealth(p.servers, Pending) {
			p.refuse("no server node is ready: " + strings.Join(names, ", "))
		} else {
			p.wait("waiting for the first server to become ready: %s", strings.Join(names, ", "))
		}
		return false
	}
	if p.bootstrapped() {
		p.refuse("the control plane is lost: no server node is left, but nodes that joined it remain; restore a server or recreate the cluster")
		return false
	}
	if p.srvOut > 0 {
		p.wait("waiting for the old server to be deleted before creating the initial server")
		return false
	}
	p.create(RoleServer, true, "")
	return false
}

// bootstrapped: some node was created after a server became ready (a joining server or an
// agent still exists), so a new initial server would start a second, separate cluster.
func (p *pass) bootstrapped() bool {
	for _, n := range p.all {
		if HealthOf(n) == Gone || (p.leaving[n.Name] && n.Stage != StageRemove) {
			continue // replaced or forgotten in this pass
		}
		if n.Role == RoleAgent || !n.Initial {
			return true
		}
	}
	return false
}

// serversSettled: every staying server is ready and no server is on its way in or out.
func (p *pass) serversSettled() (bool, string) {
	if p.srvOut > 0 {
		return false, "a server removal is in progress"
	}
	for _, n := range p.servers {
		if HealthOf(n) != Ready {
			return false, "server " + describe(n) + " is not ready"
		}
	}
	return true, ""
}

// growServers adds joining servers one at a time (etcd adds one member at a time), each once
// every server is ready.
func (p *pass) growServers() {
	if len(p.servers) >= p.d.Servers {
		return
	}
	if ok, why := p.serversSettled(); !ok {
		p.wait("%d of %d servers; the next joins when %s", len(p.servers), p.d.Servers, strings.TrimPrefix(why, "a "))
		return
	}
	p.create(RoleServer, false, p.joinTarget())
}

// growAgents adds the missing agents once the control plane is complete and ready.
func (p *pass) growAgents() {
	missing := p.d.Agents - len(p.agents)
	if missing <= 0 {
		return
	}
	ok, why := p.serversSettled()
	if ok && len(p.servers) < p.d.Servers {
		ok, why = false, fmt.Sprintf("the control plane has %d of %d servers", len(p.servers), p.d.Servers)
	}
	if !ok {
		p.wait("%d agents to add once the control plane is ready (%s)", missing, why)
		return
	}
	target := p.joinTarget()
	for range missing {
		p.create(RoleAgent, false, target)
	}
}

// shrinkAgents removes surplus agents: failed and pending ones first, then the highest index.
func (p *pass) shrinkAgents() {
	surplus := len(p.agents) - p.d.Agents
	if surplus <= 0 {
		return
	}
	for _, n := range removalOrder(p.agents)[:surplus] {
		p.act(Remove, n, fmt.Sprintf("the cluster is scaled to %d agents", p.d.Agents))
	}
	p.agents = p.agents[:0:0]
	for _, n := range p.all {
		if n.Role == RoleAgent && !p.leaving[n.Name] {
			p.agents = append(p.agents, n)
		}
	}
}

// shrinkServers removes one surplus server when that keeps etcd quorum: agents have been
// removed first, no other server is leaving, every server is ready, and no joining node
// depends on the one chosen.
func (p *pass) shrinkServers() {
	if len(p.servers) <= p.d.Servers {
		return
	}
	if surplus := len(p.agents) - p.d.Agents; surplus > 0 || p.agentsLeaving() {
		p.wait("servers are removed after the surplus agents")
		return
	}
	if ok, why := p.serversSettled(); !ok {
		msg := "cannot remove a server while " + why + ": etcd could lose quorum"
		if anyHealth(p.servers, Failed) {
			p.refuse(msg)
		} else {
			p.wait("%s", msg)
		}
		return
	}
	for _, n := range removalOrder(p.servers) {
		if p.attached[n.Name] {
			continue
		}
		p.act(Remove, n, fmt.Sprintf("the cluster is scaled to %d servers (one at a time)", p.d.Servers))
		return
	}
	p.wait("every surplus server has a node joining through it; waiting for those to join")
}

func (p *pass) agentsLeaving() bool {
	for _, n := range p.all {
		if n.Role == RoleAgent && p.leaving[n.Name] {
			return true
		}
	}
	return false
}

// reportNodes names staying nodes that are not ready: failed ones as refusals (the planner
// does not remove them on its own), pending ones as waits.
func (p *pass) reportNodes() {
	for _, n := range p.all {
		if p.leaving[n.Name] {
			continue
		}
		switch HealthOf(n) {
		case Failed:
			p.refuse("node " + describe(n) + " has failed; repair or delete it")
		case Pending:
			p.wait("node %s is installing", describe(n))
		}
	}
}

// removalOrder sorts candidates for removal: not ready first, then joining before initial,
// then the highest index.
func removalOrder(nodes []*Node) []*Node {
	out := append([]*Node(nil), nodes...)
	rank := func(n *Node) int {
		switch HealthOf(n) {
		case Failed:
			return 0
		case Pending:
			return 1
		}
		if !n.Initial {
			return 2
		}
		return 3
	}
	sort.SliceStable(out, func(i, j int) bool {
		if ri, rj := rank(out[i]), rank(out[j]); ri != rj {
			return ri < rj
		}
		return out[i].Index > out[j].Index
	})
	return out
}

// joinTarget picks the server new nodes join through: the initial server if it is ready and
// staying, else the ready server with the lowest index. Callers ensure one exists.
func (p *pass) joinTarget() string {
	best := ""
	for _, n := range p.servers { // sorted by index
		if HealthOf(n) != Ready {
			continue
		}
		if n.Initial {
			return n.Name
		}
		if best == "" {
			best = n.Name
		}
	}
	return best
}

// create adds a Create action with the lowest free index of the role.
func (p *pass) create(r Role, initial bool, join string) {
	idx := 0
	for p.taken[r][idx] {
		idx++
	}
	p.taken[r][idx] = true
	if p.d.ViaRancher {
		join = ""
	}
	if join != "" {
		p.attached[join] = true // a server a new node joins through is not removed in this pass
	}
	inv := Inventory{Cluster: p.d.Cluster, Role: r, Initial: initial, Stage: StageInstall, Index: idx, Join: join}
	name := NodeName(p.d.Name, r, idx)
	reason := "initial server"
	switch {
	case r == RoleServer && !initial:
		reason = "joining server"
	case r == RoleAgent:
		reason = "agent"
	}
	p.plan.Actions = append(p.plan.Actions, Action{Kind: Create, Node: name, Inventory: inv, Reason: reason})
}
