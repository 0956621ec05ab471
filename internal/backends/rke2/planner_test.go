package rke2

import (
	"fmt"
	"strings"
	"testing"
)

// node builds an observed node: "s0" is server 0 (the initial one), "s1" a joining server,
// "a2" agent 2; state "ok" = ACTIVE + active, "build" = BUILD, "reg" = ACTIVE + registering,
// "err" = Nova ERROR, "fail" = ACTIVE + Rancher error, "gone" = no VM.
func node(id, state string, opts ...func(*Node)) Node {
	role := RoleServer
	if id[0] == 'a' {
		role = RoleAgent
	}
	var idx int
	fmt.Sscanf(id[1:], "%d", &idx)
	n := Node{Name: NodeName("c", role, idx), Inventory: Inventory{Cluster: testCluster, Role: role, Stage: StageInstall, Index: idx,
		Initial: role == RoleServer && idx == 0}}
	if !n.Initial {
		n.Join = "c-server-0"
	}
	vr, ok := map[string][2]string{"ok": {"ACTIVE", "active"}, "build": {"BUILD", ""}, "reg": {"ACTIVE", "registering"},
		"err": {"ERROR", ""}, "fail": {"ACTIVE", "error"}, "gone": {"", "unavailable"}, "off": {"SHUTOFF", "unavailable"}}[state]
	if !ok {
		panic("unknown state " + state)
	}
	n.VM, n.Rancher = vr[0], vr[1]
	for _, o := range opts {
		o(&n)
	}
	return n
}

func removing(n *Node)            { n.Stage = StageRemove }
func joins(to string) func(*Node) { return func(n *Node) { n.Join = to } }

func summary(p Plan) string {
	var parts []string
	for _, a := range p.Actions {
		s := a.Kind.String() + " " + a.Node
		if a.Kind == Create && a.Inventory.Join != "" {
			s += "→" + a.Inventory.Join
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

type stageCase struct {
	name    string
	d       Desired
	nodes   []Node
	want    string
	refused string
	done    bool
}

func stageCases() []stageCase {
	d33 := Desired{Cluster: testCluster, Name: "c", Servers: 3, Agents: 2}
	return []stageCase{
		{"empty cluster: the initial server alone", d33, nil, "create c-server-0", "", false},
		{"initial server building: wait", d33, []Node{node("s0", "build")}, "", "", false},
		{"initial server registering: still wait", d33, []Node{node("s0", "reg")}, "", "", false},
		{"initial ready: one joining server through it", d33, []Node{node("s0", "ok")}, "create c-server-1→c-server-0", "", false},
		{"joining server pending: the next waits, no agents", d33, []Node{node("s0", "ok"), node("s1", "reg")}, "", "", false},
		{"two ready: the third server", d33, []Node{node("s0", "ok"), node("s1", "ok")}, "create c-server-2→c-server-0", "", false},
		{"control plane ready: all agents", d33, []Node{node("s0", "ok"), node("s1", "ok"), node("s2", "ok")},
			"create c-agent-0→c-server-0, create c-agent-1→c-server-0", "", false},
		{"all ready: done", d33, []Node{node("s0", "ok"), node("s1", "ok"), node("s2", "ok"), node("a0", "ok"), node("a1", "ok")}, "", "", true},
		{"scale down agents first, servers wait",
			Desired{Cluster: testCluster, Name: "c", Servers: 1, Agents: 1},
			[]Node{node("s0", "ok"), node("s1", "ok"), node("s2", "ok"), node("a0", "ok"), node("a1", "ok")}, "remove c-agent-1", "", false},
		{"then one server, the highest joining one",
			Desired{Cluster: testCluster, Name: "c", Servers: 1, Agents: 1},
			[]Node{node("s0", "ok"), node("s1", "ok"), node("s2", "ok"), node("a0", "ok")}, "remove c-server-2", "", false},
		{"a server removal in flight: continue it, start no other",
			Desired{Cluster: testCluster, Name: "c", Servers: 1, Agents: 1},
			[]Node{node("s0", "ok"), node("s1", "ok"), node("s2", "ok", removing), node("a0", "ok")}, "remove c-server-2", "", false},
		{"a failed server blocks server removal with a reason",
			Desired{Cluster: testCluster, Name: "c", Servers: 1, Agents: 1},
			[]Node{node("s0", "ok"), node("s1", "fail"), node("s2", "ok"), node("a0", "ok")}, "", "etcd could lose quorum", false},
		{"a broken agent is replaced", d33,
			[]Node{node("s0", "ok"), node("s1", "ok"), node("s2", "ok"), node("a0", "err"), node("a1", "ok")},
			"replace c-agent-0, create c-agent-2→c-server-0", "", false},
		{"two broken servers: one at a time", d33,
			[]Node{node("s0", "ok"), node("s1", "err"), node("s2", "err"), node("a0", "ok"), node("a1", "ok")}, "replace c-server-1", "", false},
		{"a broken initial server before anything joined: re-created after deletion", d33, []Node{node("s0", "err")}, "replace c-server-0", "", false},
		{"a server VM that is gone: forget it (its etcd member goes first), then join the next", d33, []Node{node("s0", "ok"), node("s1", "gone")}, "forget c-server-1", "", false},
		{"an agent VM that is gone: forget it while the next server joins", d33, []Node{node("s0", "ok"), node("s1", "ok"), node("a0", "gone")}, "forget c-agent-0, create c-server-2→c-server-0", "", false},
		{"joining through a removed server: replaced", d33,
			[]Node{node("s0", "ok"), node("s1", "ok"), node("s2", "reg", joins("c-server-9"))}, "replace c-server-2", "", false},
		{"the initial server gone: join through the lowest ready one", d33,
			[]Node{node("s1", "ok"), node("s2", "ok")}, "create c-server-0→c-server-1", "", false},
		{"agents added and a server removed in one pass: never the new agents' join server",
			Desired{Cluster: testCluster, Name: "c", Servers: 1, Agents: 3},
			[]Node{node("s1", "ok"), node("s2", "ok"), node("a0", "ok")},
			"create c-agent-1→c-server-1, create c-agent-2→c-server-1, remove c-server-2", "", false},
		{"control plane lost", d33, []Node{node("a0", "ok")}, "", "control plane is lost", false},
		{"even server count refused", Desired{Cluster: testCluster, Name: "c", Servers: 2, Agents: 1}, nil, "", "1, 3 or 5 servers", false},
		{"no agents refused", Desired{Cluster: testCluster, Name: "c", Servers: 1, Agents: 0}, nil, "", "at least one agent", false},
		{"a stopped agent is reported, not removed", d33,
			[]Node{node("s0", "ok"), node("s1", "ok"), node("s2", "ok"), node("a0", "off"), node("a1", "ok")}, "", "c-agent-0 (VM SHUTOFF) has failed", false},
	}
}

func TestPlanPassStages(t *testing.T) {
	for _, tc := range stageCases() {
		t.Run(tc.name, func(t *testing.T) {
			p := PlanPass(tc.d, tc.nodes)
			if got := summary(p); got != tc.want {
				t.Errorf("actions = %q, want %q (waits %v, refusals %v)", got, tc.want, p.Waits, p.Refusals)
			}
			refusals := strings.Join(p.Refusals, "; ")
			if (tc.refused == "") != (refusals == "") || !strings.Contains(refusals, tc.refused) {
				t.Errorf("refusals = %q, want one containing %q", refusals, tc.refused)
			}
			if p.Done != tc.done {
				t.Errorf("done = %v, want %v", p.Done, tc.done)
			}
		})
	}
}

func TestPlanPassWaitsExplain(t *testing.T) {
	p := PlanPass(Desired{Cluster: testCluster, Name: "c", Servers: 3, Agents: 1}, []Node{node("s0", "ok"), node("s1", "reg")})
	w := strings.Join(p.Waits, "; ")
	for _, want := range []string{"2 of 3 servers", "c-server-1 (registering)", "agents to add once the control plane is ready"} {
		if !strings.Contains(w, want) {
			t.Errorf("waits %q lack %q", w, want)
		}
	}
}

// BenchmarkPlanPass1000 plans a 1,000-node cluster (5 servers, 995 agents) that is scaling
// down by 100 agents while 10 agents are broken: the target is ≤ 10 ms per pass.
func BenchmarkPlanPass1000(b *testing.B) {
	nodes := []Node{node("s0", "ok"), node("s1", "ok"), node("s2", "ok"), node("s3", "ok"), node("s4", "ok")}
	for i := range 995 {
		st := "ok"
		if i%100 == 7 {
			st = "err"
		}
		nodes = append(nodes, node(fmt.Sprintf("a%d", i), st))
	}
	d := Desired{Cluster: testCluster, Name: "c", Servers: 5, Agents: 895}
	b.ReportAllocs()
	for b.Loop() {
		p := PlanPass(d, nodes)
		if len(p.Actions) == 0 {
			b.Fatal("no actions")
		}
	}
}

func TestPlanPassClusterStage(t *testing.T) {
	want := map[string]string{
		"empty cluster: the initial server alone":             ClusterInitialServer,
		"initial server registering: still wait":              ClusterInitialServer,
		"initial ready: one joining server through it":        ClusterJoiningServers,
		"joining server pending: the next waits, no agents":   ClusterJoiningServers,
		"control plane ready: all agents":                     ClusterAgents,
		"all ready: done":                                     ClusterReady,
		"scale down agents first, servers wait":               ClusterScaling,
		"a failed server blocks server removal with a reason": ClusterBlocked,
		"control plane lost":                                  ClusterBlocked,
		"a broken agent is replaced":                          ClusterAgents,
	}
	for _, tc := range stageCases() {
		w, ok := want[tc.name]
		if !ok {
			continue
		}
		delete(want, tc.name)
		if got := PlanPass(tc.d, tc.nodes).ClusterStage; got != w {
			t.Errorf("%s: stage %q, want %q", tc.name, got, w)
		}
	}
	if len(want) > 0 {
		t.Errorf("cases not found: %v", want)
	}
}

// TestPlanPassViaRancher: with Rancher bootstrap, nodes carry no join target, so a node still
// registering is never replaced for its server having gone; the stage order is unchanged.
func TestPlanPassViaRancher(t *testing.T) {
	d := Desired{Cluster: testCluster, Name: "c", Servers: 3, Agents: 2, ViaRancher: true}
	if got := summary(PlanPass(d, []Node{node("s0", "ok")})); got != "create c-server-1" {
		t.Errorf("joining server: %q", got)
	}
	if got := summary(PlanPass(d, []Node{node("s0", "ok"), node("s1", "reg")})); got != "" {
		t.Errorf("second joining server before the first is ready: %q", got)
	}
	nodes := []Node{node("s1", "ok"), node("s2", "ok"), node("s3", "reg", joins(""))}
	if got := summary(PlanPass(d, nodes)); got != "" {
		t.Errorf("a registering node without join target: %q", got)
	}
}
