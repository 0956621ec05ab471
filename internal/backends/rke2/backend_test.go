package rke2

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// memBackend is a fresh Backend on w (the agent keeps nothing between calls; each call here
// could be a restarted process).
func memBackend(t *testing.T, w *memWorld, kv ...any) *Backend {
	s := goldenSettings(t, append([]any{"drain_timeout", "10m"}, kv...)...)
	comps := backends.Components{{Name: UsageNodes, AccountingType: "usage"}, {Name: UsageCPU, AccountingType: "usage"},
		{Name: "server_nodes", AccountingType: "limit"}, {Name: "worker_nodes", AccountingType: "limit"}}
	return NewBackend(s, comps, Deps{Infra: memInfra{w}, Rancher: memRancher{w}, Vault: memVault{w},
		Now: func() time.Time { w.mu.Lock(); defer w.mu.Unlock(); return w.now }})
}

func clusterResource(servers, agents int) backends.Resource {
	return backends.Resource{UUID: testCluster, Name: "prod", Attributes: managedOrder(),
		Limits: backends.Quantities{"server_nodes": float64(servers), "worker_nodes": float64(agents)}}
}

// untilDone repeats op (one order-processing cycle each, the world ticking in between) until
// it returns nil. Transient errors are what keeps an order executing; any other error is the
// order erring and fails the test. It returns the number of cycles.
func cyclesUntilDone(t *testing.T, w *memWorld, what string, op func() error) int {
	t.Helper()
	for cycle := 1; cycle <= 200; cycle++ {
		err := op()
		if err == nil {
			return cycle
		}
		if !failure.IsTransient(err) {
			t.Fatalf("%s, cycle %d: the order would err: %v", what, cycle, err)
		}
		w.tick()
	}
	t.Fatalf("%s: not done after 200 cycles", what)
	return 0
}

func (w *memWorld) counts(cluster string) (servers, agents, active int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, vm := range w.servers {
		inv, _, _ := InventoryFromMetadata(vm.view.Metadata)
		if inv.Cluster != cluster {
			continue
		}
		if inv.Role == RoleServer {
			servers++
		} else {
			agents++
		}
	}
	if c := w.clusters[cluster]; c != nil {
		for _, n := range c.nodes {
			if n.view.State == "active" {
				active++
			}
		}
	}
	return servers, agents, active
}

func createCluster(t *testing.T, w *memWorld, servers, agents int, kv ...any) (backends.Info, int) {
	t.Helper()
	var info backends.Info
	res := clusterResource(servers, agents)
	cycles := cyclesUntilDone(t, w, "create", func() error {
		var err error
		info, err = memBackend(t, w, kv...).Create(context.Background(), backends.CreateRequest{Resource: res, Name: "ignored"})
		if info.BackendID != "" {
			res.BackendID = info.BackendID // recorded in Waldur, as the order flow does
		}
		return err
	})
	return info, cycles
}

// TestCreateScaleTerminate: a 3 + 2 cluster is built in stages (the world asserts the order),
// its Vault objects are gone once every node registered, then agents go 2 → 4, servers 3 → 1
// one at a time after draining, and terminate leaves nothing.
func TestCreateScaleTerminate(t *testing.T) {
	for _, mode := range []string{BootstrapRancher, BootstrapRKE2} {
		t.Run(mode, func(t *testing.T) {
			w := newMemWorld(t, 1)
			info, cycles := createCluster(t, w, 3, 2, "bootstrap", mode)
			if s, a, act := w.counts(testCluster); s != 3 || a != 2 || act != 5 {
				t.Fatalf("after create: %d servers, %d agents, %d active nodes", s, a, act)
			}
			if info.BackendID != "prod" || info.Limits["server_nodes"] != 3 || info.Limits["worker_nodes"] != 2 || info.Metadata["stage"] != ClusterReady {
				t.Fatalf("info %+v", info)
			}
			w.checkVaultAfterReady(t, mode)
			t.Logf("3 + 2 built in %d cycles; calls %v", cycles, w.calls)
			res := clusterResource(3, 4)
			res.BackendID = info.BackendID
			b := func() *Backend { return memBackend(t, w, "bootstrap", mode) }
			cyclesUntilDone(t, w, "scale agents", func() error { return b().SetLimits(context.Background(), res, res.Limits) })
			if s, a, _ := w.counts(testCluster); s != 3 || a != 4 {
				t.Fatalf("after scaling agents: %d servers, %d agents", s, a)
			}
			w.checkVaultAfterReady(t, mode)
			res.Limits = backends.Quantities{"server_nodes": 1, "worker_nodes": 4}
			maxLeaving := 0
			cyclesUntilDone(t, w, "scale servers down", func() error {
				err := b().SetLimits(context.Background(), res, res.Limits)
				maxLeaving = max(maxLeaving, w.serversLeaving())
				return err
			})
			if s, a, act := w.counts(testCluster); s != 1 || a != 4 || act != 5 {
				t.Fatalf("after scaling servers down: %d servers, %d agents, %d active", s, a, act)
			}
			if maxLeaving != 1 {
				t.Fatalf("%d servers were leaving at once", maxLeaving)
			}
			w.terminating[testCluster] = true
			cyclesUntilDone(t, w, "terminate", func() error { return b().Delete(context.Background(), res) })
			if len(w.servers) != 0 || len(w.clusters) != 0 || len(w.vault) != 0 || len(w.networks) != 0 {
				t.Fatalf("left after terminate: %d servers, %d clusters, %d vault, %d networks", len(w.servers), len(w.clusters), len(w.vault), len(w.networks))
			}
		})
	}
}

// checkVaultAfterReady: once every node is ready no node can log in any more (no AppRole or
// policy); with bootstrap rke2 the secret keeps the one join token every node read, with
// bootstrap rancher it is gone.
func (w *memWorld) checkVaultAfterReady(t *testing.T, mode string) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	v := w.vault[testCluster]
	switch {
	case mode == BootstrapRancher && v != nil:
		t.Fatalf("vault objects left after every node registered: %+v", v)
	case mode == BootstrapRancher:
	case v == nil || v.access || v.data[SecretKeyToken] == "" || v.made != 1:
		t.Fatalf("vault after every node registered: %+v, want the join token secret alone, made once", v)
	case len(w.tokensRead[testCluster]) != 1 || w.tokensRead[testCluster][v.data[SecretKeyToken]] == 0:
		t.Fatalf("nodes read the tokens %v, want the one join token", w.tokensRead[testCluster])
	}
}

// serversLeaving counts server nodes marked for removal that still exist.
func (w *memWorld) serversLeaving() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	if c := w.clusters[testCluster]; c != nil {
		for _, nd := range c.nodes {
			if nd.view.Labels[LabelStage] == string(StageRemove) && nd.view.Labels[LabelRole] == "server" {
				n++
			}
		}
	}
	return n
}

// TestTransientFaultsNeverErrAndNothingDuplicates: with 30 % of every upstream call failing
// and creates that are retried after a lost answer (two VMs of one node), the cluster is still
// built with exactly 5 VMs, and no error ever errs the order.
func TestTransientFaultsNeverErrAndNothingDuplicates(t *testing.T) {
	w := newMemWorld(t, 7)
	w.faultPct, w.dupCreate = 30, 2
	_, cycles := createCluster(t, w, 3, 2)
	w.faultPct = 0
	if s, a, act := w.counts(testCluster); s != 3 || a != 2 || act != 5 || len(w.servers) != 5 {
		t.Fatalf("%d servers, %d agents, %d active, %d VMs", s, a, act, len(w.servers))
	}
	if w.refusedLogins == 0 {
		t.Fatal("the test made no duplicate VM whose single-use secret id was refused")
	}
	t.Logf("built under 30 %% faults in %d cycles (%d twin VMs refused by Vault)", cycles, w.refusedLogins)
}

// TestDrainTimeoutNamesTheNode: a node whose pods cannot be evicted fails the removal after the
// drain timeout with a reason naming it; it stays marked, and a later order finishes it.
func TestDrainTimeoutNamesTheNode(t *testing.T) {
	w := newMemWorld(t, 3)
	info, _ := createCluster(t, w, 1, 2)
	w.neverDrain = "prod-agent-1"
	res := clusterResource(1, 1)
	res.BackendID = info.BackendID
	var err error
	for range 30 {
		if err = memBackend(t, w).SetLimits(context.Background(), res, res.Limits); err == nil || !failure.IsTransient(err) {
			break
		}
		w.tick()
	}
	if msg, ok := failure.PublicMessage(err); !ok || !strings.Contains(msg, "prod-agent-1") || !strings.Contains(msg, "drain") {
		t.Fatalf("want a readable drain timeout naming the node, got %v", err)
	}
	w.neverDrain = "" // drained by hand
	for range drainTicks + 1 {
		w.tick()
	}
	cyclesUntilDone(t, w, "retry after the drain was fixed", func() error { return memBackend(t, w).SetLimits(context.Background(), res, res.Limits) })
	if _, a, _ := w.counts(testCluster); a != 1 {
		t.Fatalf("%d agents, want 1", a)
	}
}

// TestNameTakenByAnotherResource: a Rancher cluster of that name that belongs to another
// resource is a readable refusal, not a retry.
func TestNameTakenByAnotherResource(t *testing.T) {
	w := newMemWorld(t, 5)
	createCluster(t, w, 1, 1)
	other := clusterResource(1, 1)
	other.UUID = "fedcba9876543210fedcba9876543210"
	_, err := memBackend(t, w).Create(context.Background(), backends.CreateRequest{Resource: other})
	if msg, ok := failure.PublicMessage(err); !ok || !strings.Contains(msg, `"prod"`) || !strings.Contains(msg, "another resource") {
		t.Fatalf("got %v", err)
	}
}

// TestUsageFromRancherCapacity: the offering's usage components get the cluster's capacity;
// limit components and clusters Rancher does not know are left out.
func TestUsageFromRancherCapacity(t *testing.T) {
	w := newMemWorld(t, 9)
	info, _ := createCluster(t, w, 1, 2)
	b := memBackend(t, w)
	got, err := b.Usage(context.Background(), []backends.Resource{{UUID: testCluster, BackendID: info.BackendID},
		{UUID: "fedcba9876543210fedcba9876543210", BackendID: "gone"}}, backends.Period{}, true)
	if err != nil {
		t.Fatal(err)
	}
	u := got["prod"].Total
	if len(got) != 1 || u[UsageNodes] != 3 || u[UsageCPU] != 24 || len(u) != 2 {
		t.Fatalf("usage %+v", got)
	}
}

// TestScaleBeyondTenantMaximaRefused: an Update order passes the evaluator on its counts alone;
// the backend checks the scaled cluster's totals against the tenant maxima and refuses with a
// reason the customer can read, before touching anything.
func TestScaleBeyondTenantMaximaRefused(t *testing.T) {
	w := newMemWorld(t, 1)
	info, _ := createCluster(t, w, 3, 2)
	res := clusterResource(3, 20) // 3 × 4 + 20 × 8 vCPU > 64
	res.BackendID = info.BackendID
	before := len(w.servers)
	err := memBackend(t, w).SetLimits(context.Background(), res, res.Limits)
	msg, public := failure.PublicMessage(err)
	if !public || !strings.Contains(msg, "vCPU in total, more than the 64") {
		t.Fatalf("scale to 20 agents: %v, want a refusal naming the vCPU maximum", err)
	}
	if len(w.servers) != before {
		t.Fatalf("servers %d → %d after a refused scale", before, len(w.servers))
	}
}
