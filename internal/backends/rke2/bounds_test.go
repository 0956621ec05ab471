package rke2

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends"
)

// evaluateWithin runs Evaluate and fails the test when it does not return within d: an order
// must not be able to keep the evaluator busy (2^40 workers took hours, per node, every cycle).
func evaluateWithin(t *testing.T, d time.Duration, e *Evaluator, ctx context.Context, review backends.OrderReview) (backends.Decision, string, error) {
	t.Helper()
	type result struct {
		dec backends.Decision
		why string
		err error
	}
	done := make(chan result, 1)
	go func() {
		dec, why, err := e.Evaluate(ctx, review)
		done <- result{dec, why, err}
	}()
	select {
	case r := <-done:
		return r.dec, r.why, r.err
	case <-time.After(d):
		t.Fatalf("Evaluate still busy after %s", d)
		return 0, "", nil
	}
}

// A customer's node counts are bounded by max_worker_nodes (default 100) before anything counts
// or plans per node, whichever way the order says them.
func TestNodeCountsAreBounded(t *testing.T) {
	managed := goldenSettings(t)
	self := goldenSettings(t, "deployment_mode", "self_managed")
	many := make([]map[string]any, 0, 120)
	for range 120 {
		many = append(many, smNode("agent", "m1.small"))
	}
	const huge = float64(1 << 40)
	cases := []struct {
		name string
		s    *Settings
		typ  string
		res  backends.Resource
		want string
	}{
		{"attribute", managed, "Create", backends.Resource{Attributes: managedOrder("worker_nodes_count", huge)},
			"attributes.worker_nodes_count: a cluster here has at most 100 worker nodes (max_worker_nodes), not 1099511627776"},
		{"limit on create", managed, "Create", backends.Resource{Attributes: managedOrder(), Limits: backends.Quantities{"worker_nodes": huge}},
			"limits.worker_nodes: a cluster here has at most 100 worker nodes"},
		{"limit on update", managed, "Update", backends.Resource{Limits: backends.Quantities{"worker_nodes": huge}},
			"a cluster here has at most 100 worker nodes, not 1099511627776"},
		{"one over", managed, "Create", backends.Resource{Attributes: managedOrder("worker_nodes_count", 101.0)}, "at most 100 worker nodes"},
		{"servers", managed, "Create", backends.Resource{Attributes: managedOrder(), Limits: backends.Quantities{"server_nodes": huge}},
			"limits.server_nodes: a cluster has at most 5 server nodes"},
		{"node list", self, "Create", backends.Resource{Attributes: selfManagedOrder(many...)},
			"attributes.nodes: a cluster here has at most 105 nodes (5 servers and max_worker_nodes agents), not 120"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := &Evaluator{Settings: tc.s, Flavors: cloudFlavors}
			dec, why, err := evaluateWithin(t, 5*time.Second, e, context.Background(), backends.OrderReview{Type: tc.typ, Resource: tc.res})
			if err != nil || dec != backends.Reject || !strings.Contains(why, tc.want) {
				t.Fatalf("decision %v %q %v, want a rejection saying %q", dec, why, err, tc.want)
			}
			if tc.typ == "Create" {
				if _, err := ParseSpec(tc.s, tc.res); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("ParseSpec (the Create path) = %v, want %q", err, tc.want)
				}
			}
		})
	}
	// at the bound, accepted
	e := &Evaluator{Settings: goldenSettings(t, "managed_rancher_tenant_max_cpu", 0, "managed_rancher_tenant_max_ram", 0,
		"managed_rancher_tenant_max_disk", 0), Flavors: cloudFlavors}
	dec, why, err := evaluateWithin(t, 5*time.Second, e, context.Background(),
		backends.OrderReview{Type: "Create", Resource: backends.Resource{Attributes: managedOrder("worker_nodes_count", 100.0)}})
	if err != nil || dec != backends.Accept {
		t.Fatalf("100 workers: %v %q %v, want accept", dec, why, err)
	}
}

// A node with more data volumes than device names (<driver>b … <driver>z) is refused.
func TestDataVolumesAreBounded(t *testing.T) {
	s := goldenSettings(t, "deployment_mode", "self_managed")
	n := smNode("agent", "m1.small")
	vols := make([]any, 26)
	for i := range vols {
		vols[i] = map[string]any{"size": 1024.0, "mount_point": "/data", "filesystem": "ext4"}
	}
	n["data_volumes"] = vols
	_, err := ParseSpec(s, backends.Resource{Attributes: selfManagedOrder(smNode("server", "m1.large"), n)})
	if err == nil || !strings.Contains(err.Error(), "attributes.nodes[1].data_volumes: a node has at most 25 data volumes, not 26") {
		t.Fatalf("err = %v", err)
	}
}

// The evaluator honours cancellation: a cancelled cycle gives no decision.
func TestEvaluateHonoursCancellation(t *testing.T) {
	e := &Evaluator{Settings: goldenSettings(t, "max_worker_nodes", 10000), Flavors: cloudFlavors}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dec, why, err := evaluateWithin(t, 5*time.Second, e, ctx,
		backends.OrderReview{Type: "Create", Resource: backends.Resource{Attributes: managedOrder("worker_nodes_count", 10000.0)}})
	if !errors.Is(err, context.Canceled) || dec != backends.Defer || why != "" {
		t.Fatalf("decision %v %q %v, want no decision and the context's error", dec, why, err)
	}
}

// Totals per node shape (size × count) equal the sum over every node.
func TestClusterTotalsPerShapeEqualPerNode(t *testing.T) {
	s := goldenSettings(t, "deployment_mode", "self_managed", "max_worker_nodes", 1000)
	big := smNode("agent", "m1.xlarge")
	big["data_volumes"] = []any{map[string]any{"size": 1024.0, "mount_point": "/a"}, map[string]any{"size": 4096.0, "mount_point": "/b"}}
	for _, limits := range []backends.Quantities{nil, {"worker_nodes": 1}, {"worker_nodes": 2}, {"worker_nodes": 3}, {"worker_nodes": 977, "server_nodes": 5}} {
		spec, err := ParseSpec(s, backends.Resource{Attributes: selfManagedOrder(smNode("server", "m1.large"), smNode("agent", "m1.small"), big), Limits: limits})
		if err != nil {
			t.Fatal(err)
		}
		var want Totals
		for _, r := range []Role{RoleServer, RoleAgent} {
			count := map[Role]int{RoleServer: spec.Servers, RoleAgent: spec.Agents}[r]
			for i := range count {
				n := spec.Node(r, i)
				f := cloudFlavors.flavors[n.Flavor]
				want.VCPUs += f.VCPUs
				want.RAMMB += f.RAMMB
				want.DiskGB += n.SystemVolume.SizeGB
				for _, d := range n.DataVolumes {
					want.DiskGB += d.SizeGB
				}
			}
		}
		if got := ClusterTotals(s, &spec, cloudFlavors.flavors); got != want {
			t.Errorf("limits %v: totals %+v, want %+v", limits, got, want)
		}
	}
}
