package rke2

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// Desired is what the cluster should have.
type Desired struct {
	Cluster string // the Waldur resource UUID (hex), written into new nodes' inventory
	Name    string // the cluster name, prefix of node names
	Servers int    // 1, 3 or 5
	Agents  int    // at least 1
	// ViaRancher: nodes register with Rancher (bootstrap: rancher) rather than through a
	// server's supervisor, so no join target is recorded and none can be orphaned. The stage
	// order is the same.
	ViaRancher bool
}

// ActionKind is what to do to one node.
type ActionKind uint8

// Actions.
const (
	// Create a VM with the action's Inventory (and name); its cloud-init joins through
	// Inventory.Join when that is set.
	Create ActionKind = iota + 1
	// Remove: write StageRemove, drain (with a timeout), delete the VM with its volumes, delete
	// the Rancher node. Repeated for a node already in StageRemove until it is gone.
	Remove
	// Replace: delete a broken VM (no drain: it is not running) and its Rancher node; a later
	// pass creates the replacement.
	Replace
	// Forget: delete a Rancher node whose VM no longer exists.
	Forget
)

func (k ActionKind) String() string {
	return [...]string{"", "create", "remove", "replace", "forget"}[k]
}

// Action is one step for the executor.
type Action struct {
	Kind      ActionKind
	Node      string    // the node's name
	Inventory Inventory // for Create: the new node's inventory
	Reason    string
}

// Plan is the outcome of one planning pass.
type Plan struct {
	Actions []Action
	// Waits say what the plan is waiting for (nodes installing, draining); informational.
	Waits []string
	// Refusals are conditions the planner will not work around (a failed node in the way of
	// a quorum-safe removal, a lost control plane, impossible counts). With no actions, they
	// are the reason to give the customer.
	Refusals []string
	// Done: the cluster has the desired nodes, all ready, and nothing is in flight.
	Done bool
	// ClusterStage is one of the Cluster* stage names.
	ClusterStage string
}

// pass holds one planning pass's view of the cluster.
type pass struct {
	d        Desired
	plan     Plan
	all      []*Node // every observed node, sorted by role, index, name
	byName   map[string]*Node
	taken    map[Role]map[int]bool // indices in use (including nodes on their way out)
	leaving  map[string]bool       // nodes this pass removes, replaces or forgets, or in StageRemove
	servers  []*Node               // staying servers
	agents   []*Node               // staying agents
	srvOut   int                   // server removals or replacements in flight (≤ 1)
	attached map[string]bool       // servers that a not-yet-ready node joins through
}

// Stages of a cluster as a whole (seed 002's installation_stage), for logs and metadata.
const (
	ClusterInitialServer  = "initial-server"  // the first server is being created or installed
	ClusterJoiningServers = "joining-servers" // servers are joining one by one
	ClusterAgents         = "agents"          // agents are being added
	ClusterScaling        = "scaling"         // removals and repairs
	ClusterReady          = "ready"           // the desired nodes, all ready
	ClusterBlocked        = "blocked"         // a refusal stops progress
)

// PlanPass computes the next actions from the desired counts and the observed nodes. It is a
// pure function: the same inputs give the same plan, and it can run on every pass.
func PlanPass(d Desired, observed []Node) Plan {
	p := newPass(d, observed)
	p.run()
	p.plan.ClusterStage = p.clusterStage()
	return p.plan
}

func (p *pass) run() {
	d := p.d
	if !validServerCount(d.Servers) || d.Agents < 1 {
		p.refuse(fmt.Sprintf("the cluster must have 1, 3 or 5 servers and at least one agent, not %d and %d", d.Servers, d.Agents))
		return
	}
	p.finishLeaving()
	p.replaceBroken()
	p.replaceOrphans()
	p.split()
	if !p.bootstrap() {
		return
	}
	p.growServers()
	p.growAgents()
	p.shrinkAgents()
	p.shrinkServers()
	p.reportNodes()
	p.plan.Done = len(p.plan.Actions) == 0 && len(p.plan.Waits) == 0 && len(p.plan.Refusals) == 0 &&
		len(p.servers) == d.Servers && len(p.agents) == d.Agents
}

// clusterStage names where the cluster is after this pass's decisions.
func (p *pass) clusterStage() string {
	switch {
	case p.plan.Done:
		return ClusterReady
	case len(p.plan.Refusals) > 0 && len(p.plan.Actions) == 0:
		return ClusterBlocked
	}
	ready, joining, agentsIn := 0, false, false
	for _, n := range p.servers {
		if HealthOf(n) == Ready {
			ready++
		}
	}
	for _, a := range p.plan.Actions {
		joining = joining || (a.Kind == Create && a.Inventory.Role == RoleServer && !a.Inventory.Initial)
		agentsIn = agentsIn || (a.Kind == Create && a.Inventory.Role == RoleAgent)
	}
	switch {
	case ready == 0:
		return ClusterInitialServer
	case joining || len(p.servers) < p.d.Servers:
		return ClusterJoiningServers
	case agentsIn || len(p.agents) < p.d.Agents || anyHealth(p.agents, Pending):
		return ClusterAgents
	}
	return ClusterScaling
}

// anyHealth: some node of nodes is in health h.
func anyHealth(nodes []*Node, h Health) bool {
	return slices.ContainsFunc(nodes, func(n *Node) bool { return HealthOf(n) == h })
}

func newPass(d Desired, observed []Node) *pass {
	p := &pass{d: d, byName: make(map[string]*Node, len(observed)), leaving: map[string]bool{},
		taken: map[Role]map[int]bool{RoleServer: {}, RoleAgent: {}}, attached: map[string]bool{}}
	p.all = make([]*Node, len(observed))
	for i := range observed {
		n := &observed[i]
		p.all[i] = n
		p.byName[n.Name] = n
		if p.taken[n.Role] != nil {
			p.taken[n.Role][n.Index] = true
		}
	}
	sort.Slice(p.all, func(i, j int) bool {
		a, b := p.all[i], p.all[j]
		if a.Role != b.Role {
			return a.Role < b.Role
		}
		if a.Index != b.Index {
			return a.Index < b.Index
		}
		return a.Name < b.Name
	})
	return p
}

func (p *pass) act(kind ActionKind, n *Node, reason string) {
	p.plan.Actions = append(p.plan.Actions, Action{Kind: kind, Node: n.Name, Inventory: n.Inventory, Reason: reason})
	p.leaving[n.Name] = true
	if n.Role == RoleServer { // a forgotten server's etcd member is removed too: one at a time
		p.srvOut++
	}
}

func (p *pass) wait(format string, args ...any) {
	p.plan.Waits = append(p.plan.Waits, fmt.Sprintf(format, args...))
}

func (p *pass) refuse(msg string) { p.plan.Refusals = append(p.plan.Refusals, msg) }

// finishLeaving continues removals that a previous pass started, and forgets Rancher nodes
// whose VM is gone.
func (p *pass) finishLeaving() {
	for _, n := range p.all {
		switch {
		case HealthOf(n) == Gone:
			p.act(Forget, n, "its VM no longer exists")
		case n.Stage == StageRemove && HealthOf(n) == Broken:
			p.act(Replace, n, "removal in progress; its VM is in ERROR, so it is deleted without draining")
		case n.Stage == StageRemove:
			p.act(Remove, n, "removal in progress")
		}
	}
}

// replaceBroken deletes VMs in Nova ERROR: agents all at once, servers one at a time and never
// while another server is on its way out.
func (p *pass) replaceBroken() {
	for _, n := range p.all {
		if p.leaving[n.Name] || HealthOf(n) != Broken {
			continue
		}
		if n.Role == RoleServer && p.srvOut > 0 {
			p.wait("server %s is in ERROR; it is replaced after the server removal in progress", n.Name)
			continue
		}
		p.act(Replace, n, brokenReason(n))
	}
}

func brokenReason(n *Node) string {
	if n.Damaged != "" {
		return "its VM " + n.Damaged + "; it is made again"
	}
	if n.Unregistered {
		return "its VM never registered with Rancher (bootstrap failed); it is made again with fresh credentials"
	}
	if n.Unresponsive && n.VM == "ACTIVE" {
		return "its node has been NotReady since " + n.ReadySince.UTC().Format(time.RFC3339) + "; it is made again"
	}
	return "its VM is in ERROR"
}

// replaceOrphans replaces nodes still joining through a server that is leaving or gone: their
// configuration points at it, so they would never join. A node that has registered once no
// longer needs that server (it knows them all), so it is left alone.
func (p *pass) replaceOrphans() {
	for _, n := range p.all {
		if p.leaving[n.Name] || n.Join == "" || !stillJoining(n) {
			continue
		}
		if t, ok := p.byName[n.Join]; ok && !p.leaving[t.Name] && t.Role == RoleServer {
			continue
		}
		if n.Role == RoleServer && p.srvOut > 0 {
			p.wait("server %s joins through %s, which is gone; it is replaced after the server removal in progress", n.Name, n.Join)
			continue
		}
		p.act(Replace, n, fmt.Sprintf("it was joining through %s, which is gone", n.Join))
	}
}

// split sorts the staying nodes by role and records which servers not-ready nodes depend on.
func (p *pass) split() {
	for _, n := range p.all {
		if p.leaving[n.Name] {
			continue
		}
		if n.Role == RoleServer {
			p.servers = append(p.servers, n)
		} else {
			p.agents = append(p.agents, n)
		}
		if n.Join != "" && stillJoining(n) {
			p.attached[n.Join] = true
		}
	}
}

// stillJoining: the node has not registered yet (its VM is building, or Rancher does not list
// it or shows it registering), so it still depends on the server it joins through.
func stillJoining(n *Node) bool {
	return HealthOf(n) == Pending && (n.Rancher == "" || n.Rancher == "registering")
}
