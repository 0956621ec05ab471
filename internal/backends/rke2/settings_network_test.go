package rke2

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

// Defect 1 of issue 17: the default node subnet (10.42.0.0/22) lay inside RKE2's default pod
// network (10.42.0.0/16). With the defaults, the node, pod and service networks are apart.
func TestDefaultNetworksAreApart(t *testing.T) {
	s, _, err := DecodeSettings(baseSettings())
	if err != nil {
		t.Fatal(err)
	}
	if s.ClusterCIDR != "10.42.0.0/16" || s.ServiceCIDR != "10.43.0.0/16" {
		t.Fatalf("cluster_cidr %q, service_cidr %q: want RKE2's defaults", s.ClusterCIDR, s.ServiceCIDR)
	}
	nodes := netip.MustParsePrefix(s.OpenStack.SubnetCIDR)
	// RKE2's defaults, then kubeadm's service and flannel's pod networks a site may switch to
	for _, k8s := range []string{"10.42.0.0/16", "10.43.0.0/16", "10.96.0.0/12", "10.244.0.0/16"} {
		if nodes.Overlaps(netip.MustParsePrefix(k8s)) {
			t.Errorf("the default node subnet %s overlaps %s", nodes, k8s)
		}
	}
	if nodes.Bits() > 22 {
		t.Errorf("the default node subnet %s holds fewer nodes than a /22", nodes)
	}
	if !reflect.DeepEqual(s.OpenStack.APIAllowedCIDRs, []string{"0.0.0.0/0"}) || len(s.OpenStack.SSHAllowedCIDRs) != 0 {
		t.Errorf("api_allowed_cidrs %v (want 0.0.0.0/0), ssh_allowed_cidrs %v (want none)", s.OpenStack.APIAllowedCIDRs, s.OpenStack.SSHAllowedCIDRs)
	}
}

// Overlaps between the three networks are refused at start-up, naming both keys.
func TestNetworkOverlapsAreRefused(t *testing.T) {
	cases := []struct {
		name string
		kv   []any
		os   []any
		keys []string
	}{
		{"the old default subnet", nil, []any{"subnet_cidr", "10.42.0.0/22"}, []string{"backend_settings.cluster_cidr", "backend_settings.openstack.subnet_cidr"}},
		{"pods over services", []any{"cluster_cidr", "10.0.0.0/8"}, nil, []string{"backend_settings.cluster_cidr", "backend_settings.service_cidr"}},
		{"services over nodes", []any{"service_cidr", "10.96.0.0/12"}, []any{"subnet_cidr", "10.100.0.0/22"}, []string{"backend_settings.service_cidr", "backend_settings.openstack.subnet_cidr"}},
		{"moved pods onto nodes", []any{"cluster_cidr", "10.200.0.0/16"}, nil, []string{"backend_settings.cluster_cidr", "backend_settings.openstack.subnet_cidr"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := with(withOS(tc.os...), tc.kv...)
			_, _, err := DecodeSettings(in)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, k := range tc.keys {
				if !strings.Contains(err.Error(), k) {
					t.Errorf("%v: does not name %s", err, k)
				}
			}
		})
	}
	ok := with(withOS("subnet_cidr", "192.168.42.0/24"), "cluster_cidr", "10.244.0.0/16", "service_cidr", "10.96.0.0/12")
	if _, _, err := DecodeSettings(ok); err != nil {
		t.Fatalf("separate networks refused: %v", err)
	}
}

func TestNetworkSettingErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		name string
		in   map[string]any
		key  string
	}{
		{"cluster not a network", with(baseSettings(), "cluster_cidr", "10.42.0.1/16"), "backend_settings.cluster_cidr"},
		{"cluster too small", with(baseSettings(), "cluster_cidr", "10.42.0.0/26"), "backend_settings.cluster_cidr"},
		{"cluster ipv6", with(baseSettings(), "cluster_cidr", "fd00::/56"), "backend_settings.cluster_cidr"},
		{"service too big", with(baseSettings(), "service_cidr", "10.0.0.0/9"), "backend_settings.service_cidr"},
		{"ssh host bits", withOS("ssh_allowed_cidrs", []any{"192.0.2.7/24"}), "backend_settings.openstack.ssh_allowed_cidrs[0]"},
		{"ssh twice", withOS("ssh_allowed_cidrs", []any{"192.0.2.0/24", "192.0.2.0/24"}), "backend_settings.openstack.ssh_allowed_cidrs[1]"},
		{"api garbage", withOS("api_allowed_cidrs", []any{"anywhere"}), "backend_settings.openstack.api_allowed_cidrs[0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := DecodeSettings(tc.in); err == nil || !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("err = %v, want one naming %s", err, tc.key)
			}
		})
	}
	s, _, err := DecodeSettings(withOS("api_allowed_cidrs", []any{}, "ssh_allowed_cidrs", []any{"2001:db8::/32", "198.51.100.0/24"}))
	if err != nil {
		t.Fatal(err)
	}
	if s.OpenStack.APIAllowedCIDRs == nil || len(s.OpenStack.APIAllowedCIDRs) != 0 || len(s.OpenStack.SSHAllowedCIDRs) != 2 {
		t.Fatalf("an empty api_allowed_cidrs must close 6443, not fall back to the default: %v; ssh %v", s.OpenStack.APIAllowedCIDRs, s.OpenStack.SSHAllowedCIDRs)
	}
}
