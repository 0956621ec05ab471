package rke2

import (
	"strings"
	"testing"
	"time"
)

func TestObserve(t *testing.T) {
	other := strings.Repeat("f", 32)
	s0 := Inventory{Cluster: testCluster, Role: RoleServer, Initial: true, Stage: StageInstall}
	a0 := Inventory{Cluster: testCluster, Role: RoleAgent, Stage: StageInstall, Join: "c-server-0"}
	a1 := Inventory{Cluster: testCluster, Role: RoleAgent, Stage: StageInstall, Index: 1, Join: "c-server-0"}
	a2 := Inventory{Cluster: testCluster, Role: RoleAgent, Stage: StageRemove, Index: 2, Join: "c-server-0"}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	servers := []ServerView{
		{ID: "v-s0", Name: "c-server-0", Status: "ACTIVE", Metadata: s0.Metadata()},
		{ID: "v-a0-late", Name: "c-agent-0", Status: "ACTIVE", Created: t0.Add(time.Minute), Metadata: a0.Metadata()},
		{ID: "v-a0", Name: "c-agent-0", Status: "ACTIVE", Created: t0, Metadata: a0.Metadata()},
		{ID: "v-a0-err", Name: "c-agent-0", Status: "ERROR", Created: t0.Add(-time.Minute), Metadata: a0.Metadata()},
		{ID: "v-a1", Name: "c-agent-1", Status: "BUILD", Metadata: a1.Metadata()},
		{ID: "v-x", Name: "x-server-0", Status: "ACTIVE", Metadata: Inventory{Cluster: other, Role: RoleServer, Initial: true, Stage: StageInstall}.Metadata()},
		{ID: "v-plain", Name: "somebody-elses-vm", Status: "ACTIVE"},
	}
	a1Removing := a1
	a1Removing.Stage = StageRemove
	rnodes := []RancherNodeView{
		{ID: "m-s0", Name: "c-server-0", State: "active", Labels: s0.Labels()},
		{ID: "m-a0", Name: "c-agent-0", State: "active"}, // labels not (yet) applied: matched by name
		{ID: "m-a1", Name: "c-agent-1", State: "registering", Labels: a1Removing.Labels()},
		{ID: "m-a2", Name: "c-agent-2", State: "unavailable", Labels: a2.Labels()},
		{ID: "m-x", Name: "x-server-0", State: "active", Labels: Inventory{Cluster: other, Role: RoleServer, Initial: true, Stage: StageInstall}.Labels()},
		{ID: "m-hand", Name: "hand-made", State: "active"},
	}
	obs, err := Observe(testCluster, servers, rnodes)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Node{}
	for _, n := range obs.Nodes {
		got[n.Name] = n
	}
	if len(got) != 4 {
		t.Fatalf("nodes %+v", obs.Nodes)
	}
	if n := got["c-server-0"]; n.VM != "ACTIVE" || n.Rancher != "active" || !n.Initial {
		t.Errorf("server %+v", n)
	}
	if n := got["c-agent-0"]; n.VM != "ACTIVE" || n.Rancher != "active" {
		t.Errorf("agent 0 %+v", n)
	}
	if n := got["c-agent-1"]; n.Stage != StageRemove || n.VM != "BUILD" {
		t.Errorf("agent 1 must be removing (the Rancher label says so): %+v", n)
	}
	if n := got["c-agent-2"]; n.VM != "" || HealthOf(&n) != Gone || n.Index != 2 {
		t.Errorf("agent 2 (Rancher only) %+v", n)
	}
	if len(obs.Strays) != 2 || obs.Strays[0].ID != "v-a0-late" || obs.Strays[1].ID != "v-a0-err" {
		t.Errorf("strays %+v, want the later ACTIVE and the ERROR duplicate", obs.Strays)
	}
	if strings.Join(obs.Foreign, ",") != "hand-made" {
		t.Errorf("foreign %v", obs.Foreign)
	}
}

func TestObserveRefusesBrokenInventory(t *testing.T) {
	bad := Inventory{Cluster: testCluster, Role: RoleAgent, Stage: StageInstall}.Metadata()
	bad[MetaIndex] = "seven"
	othersBad := Inventory{Cluster: strings.Repeat("e", 32), Role: RoleAgent, Stage: StageInstall}.Metadata()
	othersBad[MetaIndex] = "seven"
	if _, err := Observe(testCluster, []ServerView{{ID: "v1", Name: "c-agent-7", Metadata: othersBad}}, nil); err != nil {
		t.Errorf("another cluster's broken server stopped this one: %v", err)
	}
	_, err := Observe(testCluster, []ServerView{{ID: "v1", Name: "c-agent-7", Metadata: bad}}, nil)
	if err == nil || !strings.Contains(err.Error(), "c-agent-7") || !strings.Contains(err.Error(), MetaIndex) {
		t.Fatalf("err = %v, want one naming the server and the key", err)
	}
}

// TestObservePlanRoundTrip: a plan's Create inventory, written to Nova and read back, gives the
// planner the node it asked for (no second create).
func TestObservePlanRoundTrip(t *testing.T) {
	d := Desired{Cluster: testCluster, Name: "c", Servers: 1, Agents: 1}
	p := PlanPass(d, nil)
	if len(p.Actions) != 1 || p.Actions[0].Kind != Create {
		t.Fatalf("plan %+v", p)
	}
	a := p.Actions[0]
	obs, err := Observe(testCluster, []ServerView{{ID: "v", Name: a.Node, Status: "BUILD", Metadata: a.Inventory.Metadata()}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p2 := PlanPass(d, obs.Nodes); len(p2.Actions) != 0 || len(p2.Waits) == 0 {
		t.Errorf("second pass %+v, want a wait for the building initial server", p2)
	}
}
