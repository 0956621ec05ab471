package novainfra_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/sim/openstacksim"
)

// newSimCloud is an OpenStack simulator with the image, served, and a cluster reference.
func newSimCloud(t *testing.T) (*openstacksim.Server, string, rke2.ClusterRef) {
	t.Helper()
	sim := openstacksim.New(openstacksim.Options{})
	sim.AddNamedImage("cirros")
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return sim, srv.URL, rke2.ClusterRef{UUID: "0123456789abcdef0123456789abcdef", Name: "halo"}
}

// ruleSet is the group's rules as "direction ethertype protocol ports remote".
func ruleSet(sim *openstacksim.Server, group string) []string {
	var out []string
	for _, r := range sim.Rules(group) {
		if r.Direction == "ingress" {
			out = append(out, r.String())
		}
	}
	return out
}

// Defect 3 of issue 17: SSH (22) opens to ssh_allowed_cidrs only, the Kubernetes API (6443)
// to api_allowed_cidrs; the supervisor and kubelet stay limited to the cluster's nodes. A
// process's first pass over a cluster (and one every chainTTL after) brings an existing
// cluster's group in step with the settings, touching nothing when it is, and leaving rules on
// other ports alone.
func TestSecurityGroupFollowsSettings(t *testing.T) {
	sim, url, ref := newSimCloud(t)
	ctx := context.Background()
	group := "rke2-" + ref.Name + "-" + ref.UUID
	settings := map[string]any{"ssh_allowed_cidrs": []any{"198.51.100.0/24"}, "api_allowed_cidrs": []any{"192.0.2.0/24", "2001:db8::/32"}}
	restricted := simInfraOn(t, sim, url, nil, settings)
	if _, err := restricted.EnsureNetwork(ctx, ref); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ingress IPv4  " + " group:" + group,
		"ingress IPv4 icmp  0.0.0.0/0",
		"ingress IPv4 tcp 10250-10250 group:" + group,
		"ingress IPv4 tcp 22-22 198.51.100.0/24",
		"ingress IPv4 tcp 443-443 0.0.0.0/0",
		"ingress IPv4 tcp 6443-6443 192.0.2.0/24",
		"ingress IPv4 tcp 80-80 0.0.0.0/0",
		"ingress IPv4 tcp 9345-9345 group:" + group,
		"ingress IPv6 tcp 6443-6443 2001:db8::/32",
	}
	if got := ruleSet(sim, group); !slices.Equal(got, want) {
		t.Fatalf("rules\n%q\nwant\n%q", got, want)
	}
	sim.AddRule(group, "tcp", 9345, "0.0.0.0/0") // opened by hand: the supervisor stays the nodes' only
	sim.AddRule(group, "tcp", 8080, "0.0.0.0/0") // a port the settings do not own: left alone
	sim.ResetCalls()
	// the next process's first pass (a process remembers a chain it ensured: chains.go)
	if _, err := simInfraOn(t, sim, url, nil, settings).EnsureNetwork(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if c := sim.Calls(); c["neutron POST /v2.0/security-group-rules"] != 0 || c["neutron DELETE /v2.0/security-group-rules/{id}"] != 1 {
		t.Fatalf("a pass over a group in step (but the hand-made 9345 rule) made calls %v", c)
	}
	opened := simInfraOn(t, sim, url, nil, nil) // the defaults: no SSH, the API from anywhere
	if _, err := opened.EnsureNetwork(ctx, ref); err != nil {
		t.Fatal(err)
	}
	want = []string{
		"ingress IPv4  " + " group:" + group,
		"ingress IPv4 icmp  0.0.0.0/0",
		"ingress IPv4 tcp 10250-10250 group:" + group,
		"ingress IPv4 tcp 443-443 0.0.0.0/0",
		"ingress IPv4 tcp 6443-6443 0.0.0.0/0",
		"ingress IPv4 tcp 80-80 0.0.0.0/0",
		"ingress IPv4 tcp 8080-8080 0.0.0.0/0",
		"ingress IPv4 tcp 9345-9345 group:" + group,
	}
	if got := ruleSet(sim, group); !slices.Equal(got, want) {
		t.Fatalf("after the settings changed, rules\n%q\nwant\n%q", got, want)
	}
}

// Defect 1 of issue 17: a cluster network made with the old default subnet (10.42.0.0/22) is
// adopted as it is by an agent whose default changed — no second subnet, no change.
func TestExistingSubnetIsKept(t *testing.T) {
	sim, url, ref := newSimCloud(t)
	ctx := context.Background()
	old := simInfraOn(t, sim, url, map[string]any{"cluster_cidr": "10.244.0.0/16"}, map[string]any{"subnet_cidr": "10.42.0.0/22"})
	first, err := old.EnsureNetwork(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	sim.ResetCalls()
	now, err := simInfraOn(t, sim, url, nil, nil).EnsureNetwork(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	var subnets []openstacksim.SubnetInfo
	for _, sn := range sim.Subnets() {
		if sn.NetworkID == first.NetworkID {
			subnets = append(subnets, sn)
		}
	}
	if now.SubnetID != first.SubnetID || now.NetworkID != first.NetworkID || len(subnets) != 1 || subnets[0].CIDR != "10.42.0.0/22" {
		t.Fatalf("network %+v then %+v; subnets %+v", first, now, subnets)
	}
	for op, n := range sim.Calls() {
		if n > 0 && (op == "neutron POST /v2.0/subnets" || op == "neutron PUT /v2.0/subnets/{id}" || op == "neutron POST /v2.0/networks") {
			t.Fatalf("the pass changed the existing network: %s", op)
		}
	}
}

// Issue 17 item 14: an order's calls ensure the network chain once; the next call takes it as
// it is, without a request, until a teardown (or a failed server create) makes it look again.
func TestEnsureNetworkRemembersChain(t *testing.T) {
	sim, url, ref := newSimCloud(t)
	ctx := context.Background()
	in := simInfraOn(t, sim, url, nil, nil)
	first, err := in.EnsureNetwork(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	sim.ResetCalls()
	again, err := in.EnsureNetwork(ctx, ref)
	if err != nil || !slices.Equal(again.SecurityGroups, first.SecurityGroups) || again.NetworkID != first.NetworkID || again.SubnetID != first.SubnetID {
		t.Fatalf("second EnsureNetwork: %+v, %v; want %+v", again, err, first)
	}
	if c := sim.Calls(); len(c) != 0 {
		t.Fatalf("second EnsureNetwork made requests %v", c)
	}
	if err := in.TearDown(ctx, ref); err != nil {
		t.Fatal(err)
	}
	sim.ResetCalls()
	made, err := in.EnsureNetwork(ctx, ref)
	if err != nil || made.NetworkID == first.NetworkID {
		t.Fatalf("EnsureNetwork after the teardown: %+v, %v; want a new chain", made, err)
	}
	if c := sim.Calls(); c["neutron POST /v2.0/networks"] != 1 {
		t.Fatalf("EnsureNetwork after the teardown made %v, want the network made again", c)
	}
}
