package rke2

import (
	"context"
	"testing"

	"github.com/waldur/site-agent/internal/backends"
)

// Issue 17 item 14, in one process: the backend that remembers between calls (the Rancher
// cluster of waiting calls, the Vault objects and their registration token) builds, scales and
// terminates a cluster as a restarted process would — the world asserts the install order,
// quorum and single-use secret ids at every step — with 30 % of calls failing and two
// duplicated creates. A Create writes the Vault objects once, and reads the Rancher cluster on
// fewer calls than it lists the nodes.
func TestOneProcessCreateScaleTerminate(t *testing.T) {
	for _, mode := range []string{BootstrapRancher, BootstrapRKE2} {
		t.Run(mode, func(t *testing.T) {
			w := newMemWorld(t, 2)
			b := memBackend(t, w, "bootstrap", mode)
			ctx := context.Background()
			res := clusterResource(3, 2)
			cycles := cyclesUntilDone(t, w, "create", func() error {
				info, err := b.Create(ctx, backends.CreateRequest{Resource: res, Name: "ignored"})
				if info.BackendID != "" {
					res.BackendID = info.BackendID
				}
				return err
			})
			if s, a, act := w.counts(testCluster); s != 3 || a != 2 || act != 5 {
				t.Fatalf("after create: %d servers, %d agents, %d active nodes", s, a, act)
			}
			w.checkVaultAfterReady(t, mode)
			w.mu.Lock()
			ensured, reads, lists := w.calls["VaultEnsure"]+w.calls["VaultEnsureJoin"], w.calls["EnsureCluster"], w.calls["Nodes"]
			w.mu.Unlock()
			t.Logf("3 + 2 built in %d cycles; calls %v", cycles, w.calls)
			if ensured != 1 || reads >= lists {
				t.Fatalf("vault objects written %d times (want 1); the Rancher cluster read %d times, its nodes listed %d (want fewer reads)",
					ensured, reads, lists)
			}
			w.faultPct, w.dupCreate = 30, 2
			res.Limits = backends.Quantities{"server_nodes": 3, "worker_nodes": 4}
			cyclesUntilDone(t, w, "scale agents", func() error { return b.SetLimits(ctx, res, res.Limits) })
			res.Limits = backends.Quantities{"server_nodes": 1, "worker_nodes": 4}
			cyclesUntilDone(t, w, "scale servers down", func() error { return b.SetLimits(ctx, res, res.Limits) })
			w.faultPct = 0
			if s, a, act := w.counts(testCluster); s != 1 || a != 4 || act != 5 {
				t.Fatalf("after scaling: %d servers, %d agents, %d active", s, a, act)
			}
			w.checkVaultAfterReady(t, mode)
			w.terminating[testCluster] = true
			cyclesUntilDone(t, w, "terminate", func() error { return b.Delete(ctx, res) })
			if len(w.servers) != 0 || len(w.clusters) != 0 || len(w.vault) != 0 || len(w.networks) != 0 {
				t.Fatalf("left after terminate: %d servers, %d clusters, %d vault, %d networks", len(w.servers), len(w.clusters), len(w.vault), len(w.networks))
			}
		})
	}
}
