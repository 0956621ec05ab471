package rke2

import (
	"context"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends"
)

// TestUnregisteredNodeIsReplaced: a VM whose bootstrap fails (up, never registered) is deleted
// after node_registration_timeout and made again with fresh credentials; the order finishes.
// The initial server and an agent fail once each.
func TestUnregisteredNodeIsReplaced(t *testing.T) {
	for _, mode := range []string{BootstrapRancher, BootstrapRKE2} {
		t.Run(mode, func(t *testing.T) {
			w := newMemWorld(t, 1)
			w.failBoots["prod-server-0"], w.failBoots["prod-agent-0"] = 1, 1
			res := clusterResource(1, 2)
			cycles := cyclesUntilDone(t, w, "create", func() error {
				info, err := memBackend(t, w, "bootstrap", mode, "node_registration_timeout", "10m").Create(context.Background(), backends.CreateRequest{Resource: res})
				res.BackendID = info.BackendID
				return err
			})
			if s, a, act := w.counts(testCluster); s != 1 || a != 2 || act != 3 {
				t.Fatalf("after create: %d servers, %d agents, %d active", s, a, act)
			}
			if n := w.calls["DeleteServer"]; n < 2 {
				t.Fatalf("%d servers deleted, want the two stuck VMs replaced", n)
			}
			t.Logf("done in %d cycles with two failed bootstraps", cycles)
		})
	}
}

// TestEmptyRancherListNeverReplaces: an active cluster whose Rancher node list comes back
// empty (Rancher answers, but about nothing) does not get its long-running VMs replaced.
func TestEmptyRancherListNeverReplaces(t *testing.T) {
	w := newMemWorld(t, 1)
	b := memBackend(t, w)
	old := ServerView{Name: "prod-agent-0", Status: "ACTIVE", Created: w.now.Add(-48 * time.Hour)}
	nodes := []Node{{Name: "prod-agent-0", VM: "ACTIVE"}}
	b.markUnregistered(&cluster{rc: RancherCluster{State: "active"}}, nodes, []ServerView{old})
	if nodes[0].Unregistered {
		t.Fatal("an empty Rancher answer about an active cluster marked its node unregistered")
	}
	b.markUnregistered(&cluster{rc: RancherCluster{State: "provisioning"}}, nodes, []ServerView{old})
	if !nodes[0].Unregistered || HealthOf(&nodes[0]) != Broken {
		t.Fatal("a node of a cluster still coming up, silent for two days, was not marked")
	}
}
