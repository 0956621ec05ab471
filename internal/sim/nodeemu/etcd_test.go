package nodeemu

import (
	"errors"
	"strings"
	"testing"
)

// TestMemEtcdKeepsDeadMembers: a member whose machine went stays until removed; deleting two
// of three machines first loses quorum, removing members first does not; a join needs quorum
// and a removal that would leave no quorum is refused.
func TestMemEtcdKeepsDeadMembers(t *testing.T) {
	e := NewMemEtcd()
	for _, n := range []string{"s0", "s1", "s2"} {
		if err := e.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	e.Down("s2")
	if got := strings.Join(e.Members(), " "); got != "s0 s1 s2(dead)" || len(e.Problems()) != 0 {
		t.Fatalf("after one machine went: %s %v", got, e.Problems())
	}
	e.Down("s1")
	if p := e.Problems(); len(p) != 1 || !strings.Contains(p[0], "1 live of 3") {
		t.Fatalf("two machines gone without removal: %v", p)
	}
	if err := e.Add("s3"); !errors.Is(err, ErrRefused) {
		t.Fatalf("a join without quorum: %v", err)
	}
	if ok, err := e.Remove("s1"); ok || err == nil {
		t.Fatalf("a removal leaving no quorum: %v %v", ok, err)
	}

	f := NewMemEtcd()
	for _, n := range []string{"s0", "s1", "s2"} {
		_ = f.Add(n)
	}
	for _, n := range []string{"s2", "s1"} {
		if ok, err := f.Remove(n); !ok || err != nil {
			t.Fatalf("remove %s: %v %v", n, ok, err)
		}
		f.Down(n)
	}
	if ok, err := f.Remove("s9"); !ok || err != nil {
		t.Fatalf("removing a non-member: %v %v", ok, err)
	}
	if got := strings.Join(f.Members(), " "); got != "s0" || len(f.Problems()) != 0 {
		t.Fatalf("members removed first: %s %v", got, f.Problems())
	}
}

// TestClusterServerLeavesEtcdOnlyWhenRemoved: a server whose VM goes (Remove, Stop) stays a dead
// member until RemoveMember; agents are never members.
func TestClusterServerLeavesEtcdOnlyWhenRemoved(t *testing.T) {
	c := NewCluster("tok")
	steps := []Boot{{NodeName: "c-server-0", Role: "server"},
		{NodeName: "c-server-1", Role: "server", ServerURL: "https://10.0.0.1:9345"},
		{NodeName: "c-server-2", Role: "server", ServerURL: "https://10.0.0.1:9345"},
		{NodeName: "c-agent-0", Role: "agent", ServerURL: "https://10.0.0.1:9345"}}
	for i, b := range steps {
		if err := c.Join(b, "tok", "10.0.0."+string(rune('1'+i))); err != nil {
			t.Fatal(err)
		}
	}
	c.Remove("c-server-1")
	c.Remove("c-agent-0")
	if got := strings.Join(c.Etcd().Members(), " "); got != "c-server-0 c-server-1(dead) c-server-2" {
		t.Fatalf("members %s", got)
	}
	if ok, err := c.RemoveMember("c-server-1"); !ok || err != nil {
		t.Fatalf("remove the dead member: %v %v", ok, err)
	}
	if got := strings.Join(c.Etcd().Members(), " "); got != "c-server-0 c-server-2" {
		t.Fatalf("members %s", got)
	}
	c.Remove("c-server-2") // two members, one dead: no quorum to commit a removal
	if ok, err := c.RemoveMember("c-server-2"); ok || err == nil {
		t.Fatalf("a removal committed without quorum: %v %v", ok, err)
	}
}
