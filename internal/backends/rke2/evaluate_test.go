package rke2

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// flavorTable is a cloud's flavor list; the backend's Nova-backed FlavorSource answers the
// same way (failure.ErrNotFound for an unknown flavor).
type flavorTable struct {
	flavors map[string]Flavor
	err     error
}

func (f flavorTable) Flavor(_ context.Context, name string) (Flavor, error) {
	if f.err != nil {
		return Flavor{}, f.err
	}
	fl, ok := f.flavors[name]
	if !ok {
		return Flavor{}, fmt.Errorf("flavor %s: %w", name, failure.ErrNotFound)
	}
	return fl, nil
}

var cloudFlavors = flavorTable{flavors: map[string]Flavor{
	"m1.small":  {Name: "m1.small", VCPUs: 1, RAMMB: 2048},
	"m1.large":  {Name: "m1.large", VCPUs: 4, RAMMB: 8192},
	"m1.xlarge": {Name: "m1.xlarge", VCPUs: 8, RAMMB: 16384},
	"m1.tiny":   {Name: "m1.tiny", VCPUs: 1, RAMMB: 512},
	"g1.huge":   {Name: "g1.huge", VCPUs: 16, RAMMB: 262144},
}}

func managedOrder(kv ...any) map[string]any {
	m := map[string]any{"name": "prod", "worker_nodes_count": 3.0, "worker_nodes_flavor_name": "m1.xlarge",
		"worker_nodes_data_volume_size": 102400.0}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(m, kv[i].(string))
		} else {
			m[kv[i].(string)] = kv[i+1]
		}
	}
	return m
}

func selfManagedOrder(nodes ...map[string]any) map[string]any {
	l := make([]any, len(nodes))
	for i, n := range nodes {
		l[i] = n
	}
	return map[string]any{"name": "dev", "nodes": l, "ssh_public_key": "ssh-ed25519 AAAA test", "security_groups": []any{map[string]any{"name": "k8s"}, "web"}}
}

func smNode(role, flavor string) map[string]any {
	return map[string]any{"role": role, "flavor": flavor, "system_volume_size": 81920.0,
		"data_volumes": []any{map[string]any{"size": 51200.0, "mount_point": "/opt/rke2_storage", "filesystem": "btrfs"}}}
}

func TestParseSpecManaged(t *testing.T) {
	s := goldenSettings(t)
	spec, err := ParseSpec(s, backends.Resource{Attributes: managedOrder("install_longhorn", true, "worker_nodes_longhorn_volume_size", 204800.0,
		"worker_nodes_data_volume_type_name", "ssd")})
	if err != nil {
		t.Fatal(err)
	}
	agent := spec.Node(RoleAgent, 7)
	if spec.Servers != 3 || spec.Agents != 3 || agent.Flavor != "m1.xlarge" || len(agent.DataVolumes) != 2 ||
		agent.DataVolumes[0].SizeGB != 100 || agent.DataVolumes[0].Type != "ssd" || agent.DataVolumes[1].SizeGB != 200 ||
		agent.DataVolumes[1].MountPoint != LonghornMountPoint || agent.SystemVolume.SizeGB != 64 {
		t.Errorf("spec = %+v, agent %+v", spec, agent)
	}
	server := spec.Node(RoleServer, 0)
	if server.Flavor != "m1.large" || server.SystemVolume.SizeGB != 80 || server.DataVolumes[0].SizeGB != 100 {
		t.Errorf("server = %+v", server)
	}
	// An Update order's limits are the new counts.
	spec, err = ParseSpec(s, backends.Resource{Attributes: managedOrder("worker_nodes_count", nil),
		Limits: backends.Quantities{"server_nodes": 5, "worker_nodes": 10}})
	if err != nil || spec.Servers != 5 || spec.Agents != 10 {
		t.Errorf("limits: %+v %v", spec, err)
	}
}

func TestParseSpecSelfManaged(t *testing.T) {
	s := goldenSettings(t, "deployment_mode", "self_managed")
	spec, err := ParseSpec(s, backends.Resource{Attributes: selfManagedOrder(smNode("server", "m1.large"), smNode("agent", "m1.small"), smNode("worker", "m1.xlarge"))})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Servers != 1 || spec.Agents != 2 || spec.Node(RoleAgent, 1).Flavor != "m1.xlarge" || spec.Node(RoleAgent, 9).Flavor != "m1.xlarge" ||
		spec.Node(RoleServer, 0).SystemVolume.SizeGB != 80 || spec.Node(RoleServer, 0).DataVolumes[0].SizeGB != 50 ||
		fmt.Sprint(spec.SecurityGroups) != "[k8s web]" || spec.SSHPublicKey == "" {
		t.Errorf("spec = %+v", spec)
	}
}

func TestParseSpecErrorsNameTheAttribute(t *testing.T) {
	managed := goldenSettings(t)
	self := goldenSettings(t, "deployment_mode", "self_managed")
	badVol := smNode("agent", "m1.small")
	badVol["data_volumes"] = []any{map[string]any{"size": 100.0, "mount_point": "relative/path"}}
	badFS := smNode("agent", "m1.small")
	badFS["data_volumes"] = []any{map[string]any{"size": 100.0, "mount_point": "/data", "filesystem": "ntfs"}}
	cases := []struct {
		name string
		s    *Settings
		res  backends.Resource
		want string
	}{
		{"count type", managed, backends.Resource{Attributes: managedOrder("worker_nodes_count", "three")}, "attributes.worker_nodes_count"},
		{"count fraction", managed, backends.Resource{Attributes: managedOrder("worker_nodes_count", 2.5)}, "attributes.worker_nodes_count"},
		{"count missing", managed, backends.Resource{Attributes: managedOrder("worker_nodes_count", nil)}, "attributes.worker_nodes_count: is required"},
		{"flavor missing", managed, backends.Resource{Attributes: managedOrder("worker_nodes_flavor_name", nil)}, "attributes.worker_nodes_flavor_name"},
		{"data size", managed, backends.Resource{Attributes: managedOrder("worker_nodes_data_volume_size", -5.0)}, "attributes.worker_nodes_data_volume_size"},
		{"longhorn", managed, backends.Resource{Attributes: managedOrder("install_longhorn", true)}, "attributes.worker_nodes_longhorn_volume_size"},
		{"longhorn flag", managed, backends.Resource{Attributes: managedOrder("install_longhorn", "yes")}, "attributes.install_longhorn"},
		{"limit", managed, backends.Resource{Attributes: managedOrder(), Limits: backends.Quantities{"server_nodes": 1.5}}, "limits.server_nodes"},
		{"no nodes", self, backends.Resource{Attributes: map[string]any{"name": "x"}}, "attributes.nodes"},
		{"role", self, backends.Resource{Attributes: selfManagedOrder(smNode("master", "m1.large"))}, "attributes.nodes[0].role"},
		{"node flavor", self, backends.Resource{Attributes: selfManagedOrder(smNode("server", ""))}, "attributes.nodes[0].flavor"},
		{"mount point", self, backends.Resource{Attributes: selfManagedOrder(smNode("server", "m1.large"), badVol)}, "attributes.nodes[1].data_volumes[0].mount_point"},
		{"filesystem", self, backends.Resource{Attributes: selfManagedOrder(badFS)}, "attributes.nodes[0].data_volumes[0].filesystem"},
		{"node object", self, backends.Resource{Attributes: map[string]any{"nodes": []any{"server"}}}, "attributes.nodes[0]"},
		{"groups", self, backends.Resource{Attributes: map[string]any{"nodes": []any{smNode("server", "m1.large")}, "security_groups": []any{1.0}}}, "attributes.security_groups[0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec(tc.s, tc.res)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %s", err, tc.want)
			}
		})
	}
}

func TestEvaluate(t *testing.T) {
	managed := goldenSettings(t, "managed_rancher_load_balancer_flavor_name", "m1.small", "managed_rancher_load_balancer_system_volume_size_gb", 20)
	self := goldenSettings(t, "deployment_mode", "self_managed", "flavors_regex", `^m1\.`)
	cases := []struct {
		name   string
		s      *Settings
		typ    string
		res    backends.Resource
		reject string // "" = accept
	}{
		{"managed ok", managed, "Create", backends.Resource{Attributes: managedOrder()}, ""},
		{"name not a DNS label", managed, "Create", backends.Resource{Attributes: managedOrder("name", "Prod_Cluster")}, "must be a DNS label"},
		{"name too long for node names", managed, "Create", backends.Resource{Attributes: managedOrder("name", strings.Repeat("a", 51))}, "at most 50"},
		{"name from the resource", managed, "Create", backends.Resource{Name: "from-resource", Attributes: managedOrder("name", nil)}, ""},
		{"even servers", managed, "Update", backends.Resource{Attributes: managedOrder(), Limits: backends.Quantities{"server_nodes": 4}}, "1, 3 or 5 server nodes"},
		{"no agents", managed, "Create", backends.Resource{Attributes: managedOrder("worker_nodes_count", 0.0)}, "at least one agent"},
		{"agent flavor too small", managed, "Create", backends.Resource{Attributes: managedOrder("worker_nodes_flavor_name", "m1.tiny")}, `flavor "m1.tiny" (1 vCPU, 512 MB RAM) is too small for an agent node`},
		{"unknown flavor", managed, "Create", backends.Resource{Attributes: managedOrder("worker_nodes_flavor_name", "m9.none")}, `flavor "m9.none" does not exist`},
		{"cpu over tenant max", managed, "Create", backends.Resource{Attributes: managedOrder(), Limits: backends.Quantities{"worker_nodes": 8}}, "needs 77 vCPU in total, more than the 64"},
		{"update judges counts only", managed, "Update", backends.Resource{Attributes: map[string]any{"old_limits": map[string]any{}}, Limits: backends.Quantities{"server_nodes": 5, "worker_nodes": 8}}, ""},
		{"update to no agents", managed, "Update", backends.Resource{Limits: backends.Quantities{"worker_nodes": 0}}, "at least one agent"},
		{"update to a fraction", managed, "Update", backends.Resource{Limits: backends.Quantities{"server_nodes": 2.5}}, "1, 3 or 5"},
		{"ram over tenant max", managed, "Create", backends.Resource{Attributes: managedOrder("worker_nodes_flavor_name", "g1.huge", "worker_nodes_count", 1.0)}, "GB RAM in total"},
		{"disk over tenant max", managed, "Create", backends.Resource{Attributes: managedOrder("worker_nodes_data_volume_size", 2048000.0)}, "GB of volumes in total"},
		{"bad attribute", managed, "Create", backends.Resource{Attributes: managedOrder("worker_nodes_count", "x")}, "attributes.worker_nodes_count"},
		{"terminate is not judged", managed, "Terminate", backends.Resource{}, ""},
		{"self-managed ok", self, "Create", backends.Resource{Attributes: selfManagedOrder(smNode("server", "m1.large"), smNode("agent", "m1.small"))}, ""},
		{"self-managed server too small", self, "Create", backends.Resource{Attributes: selfManagedOrder(smNode("server", "m1.small"), smNode("agent", "m1.small"))}, "too small for a server node"},
		{"self-managed no agent", self, "Create", backends.Resource{Attributes: selfManagedOrder(smNode("server", "m1.large"))}, "at least one agent"},
		{"self-managed two servers", self, "Create", backends.Resource{Attributes: selfManagedOrder(smNode("server", "m1.large"), smNode("server", "m1.large"), smNode("agent", "m1.small"))}, "1, 3 or 5"},
		{"flavor not offered", self, "Create", backends.Resource{Attributes: selfManagedOrder(smNode("server", "g1.huge"), smNode("agent", "m1.small"))}, "is not offered here"},
		{"system volume too small", self, "Create", backends.Resource{Attributes: selfManagedOrder(
			map[string]any{"role": "server", "flavor": "m1.large", "system_volume_size": 10240.0}, smNode("agent", "m1.small"))}, "system volume of a server node needs at least 64 GB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := &Evaluator{Settings: tc.s, Flavors: cloudFlavors}
			dec, why, err := e.Evaluate(context.Background(), backends.OrderReview{Type: tc.typ, Resource: tc.res})
			if err != nil {
				t.Fatal(err)
			}
			if tc.reject == "" {
				if dec != backends.Accept {
					t.Fatalf("decision %v (%s), want accept", dec, why)
				}
				return
			}
			if dec != backends.Reject || !strings.Contains(why, tc.reject) {
				t.Fatalf("decision %v %q, want a rejection containing %q", dec, why, tc.reject)
			}
		})
	}
}

// TestEvaluateNovaDown: an unreachable Nova leaves the order pending (an error, no decision).
func TestEvaluateNovaDown(t *testing.T) {
	down := failure.Transient(errors.New("nova: 503"))
	e := &Evaluator{Settings: goldenSettings(t), Flavors: flavorTable{err: down}}
	dec, why, err := e.Evaluate(context.Background(), backends.OrderReview{Type: "Create", Resource: backends.Resource{Attributes: managedOrder()}})
	if err == nil || !failure.IsTransient(err) || dec == backends.Reject || why != "" {
		t.Fatalf("decision %v %q err %v, want a transient error and no rejection", dec, why, err)
	}
}

func TestClusterTotals(t *testing.T) {
	s := goldenSettings(t, "managed_rancher_load_balancer_flavor_name", "m1.small", "managed_rancher_load_balancer_system_volume_size_gb", 20)
	spec, err := ParseSpec(s, backends.Resource{Attributes: managedOrder()})
	if err != nil {
		t.Fatal(err)
	}
	got := ClusterTotals(s, &spec, cloudFlavors.flavors)
	// 3 servers m1.large (4/8192, 80+100 GB), 3 agents m1.xlarge (8/16384, 64+100 GB), LB m1.small (1/2048, 20 GB).
	want := Totals{VCPUs: 3*4 + 3*8 + 1, RAMMB: 3*8192 + 3*16384 + 2048, DiskGB: 3*180 + 3*164 + 20}
	if got != want {
		t.Errorf("totals %+v, want %+v", got, want)
	}
}

// nameTable answers ClusterOwner from a map of cluster name → owner UUID.
type nameTable struct {
	owners map[string]string
	err    error
}

func (n nameTable) ClusterOwner(_ context.Context, name string) (string, error) {
	if n.err != nil {
		return "", n.err
	}
	owner, ok := n.owners[name]
	if !ok {
		return "", fmt.Errorf("cluster %s: %w", name, failure.ErrNotFound)
	}
	return owner, nil
}

// TestEvaluateNameTaken: a Create order for a name Rancher already has is rejected unless the
// cluster is this resource's own (the order evaluated again after a restart); an unreachable
// Rancher leaves the order pending.
func TestEvaluateNameTaken(t *testing.T) {
	const mine = "0123456789abcdef0123456789abcdef"
	names := nameTable{owners: map[string]string{"taken": "ffffffffffffffffffffffffffffffff", "foreign": "", "mine": mine}}
	cases := []struct {
		name, cluster, reject string
		names                 ClusterNames
	}{
		{"free", "fresh", "", names},
		{"another resource's", "taken", `a cluster named "taken" already exists`, names},
		{"made by hand in Rancher", "foreign", `a cluster named "foreign" already exists`, names},
		{"this resource's own", "mine", "", names},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := &Evaluator{Settings: goldenSettings(t), Flavors: cloudFlavors, Names: tc.names}
			res := backends.Resource{UUID: mine, Attributes: managedOrder("name", tc.cluster)}
			dec, why, err := e.Evaluate(context.Background(), backends.OrderReview{Type: "Create", Resource: res})
			if err != nil {
				t.Fatal(err)
			}
			if tc.reject == "" && dec != backends.Accept {
				t.Fatalf("decision %v (%s), want accept", dec, why)
			}
			if tc.reject != "" && (dec != backends.Reject || !strings.Contains(why, tc.reject)) {
				t.Fatalf("decision %v %q, want a rejection containing %q", dec, why, tc.reject)
			}
		})
	}
	// An order without a resource UUID never owns a cluster made by hand (no label).
	e := &Evaluator{Settings: goldenSettings(t), Flavors: cloudFlavors, Names: names}
	if dec, _, _ := e.Evaluate(context.Background(), backends.OrderReview{Type: "Create", Resource: backends.Resource{Attributes: managedOrder("name", "foreign")}}); dec != backends.Reject {
		t.Fatalf("no uuid, foreign cluster: decision %v, want reject", dec)
	}
	down := &Evaluator{Settings: goldenSettings(t), Flavors: cloudFlavors, Names: nameTable{err: failure.Transient(errors.New("rancher: 503"))}}
	dec, why, err := down.Evaluate(context.Background(), backends.OrderReview{Type: "Create", Resource: backends.Resource{UUID: mine, Attributes: managedOrder()}})
	if err == nil || dec == backends.Reject || why != "" {
		t.Fatalf("rancher down: decision %v %q err %v, want an error and no rejection", dec, why, err)
	}
}
