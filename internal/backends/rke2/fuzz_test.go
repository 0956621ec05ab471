package rke2

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends"
)

// FuzzOrderAttributes feeds arbitrary order attributes and node-count limits, as a customer
// writes them in Waldur, to the parser and the checks of both deployment modes. Nothing may
// panic or run long, the counts stay within their bounds, and the totals are per shape ×
// count, never negative.
func FuzzOrderAttributes(f *testing.F) {
	seeds := []string{
		`{"name":"prod","worker_nodes_count":3,"worker_nodes_flavor_name":"m1.xlarge","worker_nodes_data_volume_size":102400}`,
		`{"name":"prod","worker_nodes_count":1099511627776,"worker_nodes_flavor_name":"m1.xlarge","worker_nodes_data_volume_size":1}`,
		`{"name":"lh","worker_nodes_count":2,"worker_nodes_flavor_name":"m1.large","worker_nodes_data_volume_size":0,"install_longhorn":true,"worker_nodes_longhorn_volume_size":204800}`,
		`{"name":"dev","ssh_public_key":"ssh-ed25519 AAAA","security_groups":[{"name":"k8s"},"web"],"nodes":[{"role":"server","flavor":"m1.large","system_volume_size":81920,"data_volumes":[{"size":51200,"mount_point":"/opt/rke2_storage","filesystem":"btrfs"}]},{"role":"worker","flavor":"m1.small"}]}`,
		`{"nodes":[{"role":"agent","flavor":"m1.small","data_volumes":[{"size":-1,"mount_point":"/x"}]}]}`,
		`{"worker_nodes_count":"3","nodes":"many"}`,
		`{"worker_nodes_count":1e300,"worker_nodes_data_volume_size":-0.5}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), 0.0, 0.0)
	}
	f.Add([]byte(seeds[0]), 5.0, 1e12)
	f.Add([]byte(seeds[3]), -1.0, math.Inf(1))
	settings := map[string]*Settings{}
	for _, mode := range []string{ModeManaged, ModeSelfManaged} {
		s, _, err := DecodeSettings(with(baseSettings(), "deployment_mode", mode, "managed_rancher_load_balancer_flavor_name", "m1.small"))
		if err != nil {
			f.Fatal(err)
		}
		settings[mode] = &s
	}
	f.Fuzz(func(t *testing.T, attributes []byte, servers, workers float64) {
		var attrs map[string]any
		if json.Unmarshal(attributes, &attrs) != nil {
			return
		}
		limits := backends.Quantities{}
		if servers != 0 {
			limits["server_nodes"] = servers
		}
		if workers != 0 {
			limits["worker_nodes"] = workers
		}
		res := backends.Resource{Name: "fuzzed", Attributes: attrs, Limits: limits}
		for _, s := range settings {
			start := time.Now()
			spec, err := ParseSpec(s, res)
			if err == nil {
				checkSpec(t, s, &spec)
			}
			e := &Evaluator{Settings: s, Flavors: cloudFlavors}
			for _, typ := range []string{"Create", "Update"} {
				if _, _, err := e.Evaluate(context.Background(), backends.OrderReview{Type: typ, Resource: res}); err != nil {
					t.Fatalf("%s: %v (only Nova failures defer an order)", typ, err)
				}
			}
			if d := time.Since(start); d > time.Second {
				t.Fatalf("one order took %s to judge", d)
			}
		}
	})
}

func checkSpec(t *testing.T, s *Settings, spec *ClusterSpec) {
	t.Helper()
	if spec.Servers < 0 || spec.Servers > maxServerNodes || spec.Agents < 0 || spec.Agents > s.MaxWorkerNodes {
		t.Fatalf("counts %d servers, %d agents escaped their bounds", spec.Servers, spec.Agents)
	}
	for _, r := range []Role{RoleServer, RoleAgent} {
		n := 0
		for _, sh := range spec.shapes(r) {
			n += sh.count
			if len(sh.node.DataVolumes) > maxDataVolumes {
				t.Fatalf("%d data volumes on one node", len(sh.node.DataVolumes))
			}
		}
		if want := map[Role]int{RoleServer: spec.Servers, RoleAgent: spec.Agents}[r]; n != want {
			t.Fatalf("%s shapes count %d nodes, want %d", r, n, want)
		}
	}
	tot := ClusterTotals(s, spec, cloudFlavors.flavors)
	if tot.VCPUs < 0 || tot.RAMMB < 0 || tot.DiskGB < 0 {
		t.Fatalf("negative totals %+v", tot)
	}
	_ = Check(s, spec, cloudFlavors.flavors)
}
