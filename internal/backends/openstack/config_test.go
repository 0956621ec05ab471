package openstack

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/waldur/site-agent/internal/backends"
	osc "github.com/waldur/site-agent/internal/clients/openstack"
	"github.com/waldur/site-agent/internal/secret"
)

func baseSettings() backends.Settings {
	return backends.Settings{"auth_url": "https://keystone.example.com:5000/v3", "username": "admin",
		"password": "s3cret-password", "project_name": "admin", "external_network": "public"}
}

func with(extra map[string]any, drop ...string) backends.Settings {
	s := baseSettings()
	for k, v := range extra {
		s[k] = v
	}
	for _, k := range drop {
		delete(s, k)
	}
	return s
}

func TestSettingsErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		name     string
		settings backends.Settings
		want     string
	}{
		{"missing auth_url", with(nil, "auth_url"), "backend_settings.auth_url: is required"},
		{"missing password", with(nil, "password"), "backend_settings.password: is required"},
		{"missing external network", with(nil, "external_network"), "backend_settings.external_network"},
		{"bad auth url", with(map[string]any{"auth_url": "keystone:5000"}), "backend_settings.auth_url"},
		{"bad interface", with(map[string]any{"interface": "private"}), "backend_settings.interface"},
		{"bad cidr", with(map[string]any{"subnet_cidr": "10.0.0.1/24"}), "backend_settings.subnet_cidr"},
		{"ipv6 cidr", with(map[string]any{"subnet_cidr": "fd00::/64"}), "backend_settings.subnet_cidr"},
		{"pool outside", with(map[string]any{"allocation_pool": map[string]any{"start": "10.0.0.10", "end": "10.0.0.20"}}), "backend_settings.allocation_pool"},
		{"pool with gateway", with(map[string]any{"allocation_pool": map[string]any{"start": "192.168.42.1", "end": "192.168.42.20"}}), "gateway"},
		{"bad dns", with(map[string]any{"dns_nameservers": []any{"8.8.8.8", "dns.example"}}), "backend_settings.dns_nameservers[1]"},
		{"group named default", with(map[string]any{"security_groups": []any{map[string]any{"name": "default"}}}), "security_groups[0].name"},
		{"duplicate group", with(map[string]any{"security_groups": []any{map[string]any{"name": "a"}, map[string]any{"name": "a"}}}), "security_groups[1].name"},
		{"tcp without ports", with(map[string]any{"security_groups": []any{map[string]any{"name": "a",
			"rules": []any{map[string]any{"protocol": "tcp"}}}}}), "security_groups[0].rules[0]: tcp needs"},
		{"bad protocol", with(map[string]any{"security_groups": []any{map[string]any{"name": "a",
			"rules": []any{map[string]any{"protocol": "sctp"}}}}}), "protocol must be"},
		{"prefix family", with(map[string]any{"security_groups": []any{map[string]any{"name": "a",
			"rules": []any{map[string]any{"protocol": "icmp", "ethertype": "IPv6", "remote_ip_prefix": "10.0.0.0/8"}}}}}), "not an IPv6 network"},
		{"tenant user without path", with(map[string]any{"create_tenant_user": true}), "backend_settings.credentials_path"},
		{"downscale factor", with(map[string]any{"downscale_factor": 1.5}), "backend_settings.downscale_factor"},
		{"wrong type", with(map[string]any{"force_destroy": "sometimes"}), "force_destroy"},
		{"missing ca file", with(map[string]any{"ca_cert": "/nonexistent/ca.pem"}), "backend_settings.ca_cert"},
		{"long prefix", with(map[string]any{"tenant_prefix": strings.Repeat("x", 33)}), "backend_settings.tenant_prefix"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := New(backends.Params{Settings: tc.settings})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
			if strings.Contains(err.Error(), "s3cret-password") {
				t.Fatalf("error shows the password: %v", err)
			}
		})
	}
}

func TestSettingsDefaultsAndWarnings(t *testing.T) {
	s, warnings, err := decodeSettings(with(map[string]any{"allocation_prefix": "x_", "tenant_prefx": "typo"}))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"backend_settings.tenant_prefx"}, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	got := []any{s.Domain, s.UserDomain, s.MemberRole, s.SubnetCIDR, s.Interface, *s.VerifySSL, *s.DownscaleFactor, *s.Retries, len(s.SecurityGroups)}
	want := []any{"Default", "Default", "member", "192.168.42.0/24", "public", true, 0.5, 4, 4}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if r := s.SecurityGroups[0].Rules[0]; r != (Rule{Direction: "ingress", Ethertype: "IPv4", Protocol: "tcp", PortRangeMin: 22,
		PortRangeMax: 22, RemoteIPPrefix: "0.0.0.0/0"}) {
		t.Errorf("ssh rule defaults: %+v", r)
	}
	if fmt.Sprint(s.Password) != "[REDACTED]" {
		t.Errorf("password prints as %q", fmt.Sprint(s.Password))
	}
	s2, _, err := decodeSettings(with(map[string]any{"domain": "Tenants", "security_groups": []any{}}))
	if err != nil || s2.UserDomain != "Tenants" || len(s2.SecurityGroups) != 0 {
		t.Errorf("user_domain defaults to domain and an empty security_groups list means none: %+v, %v", s2, err)
	}
	// A file written for the old 5m default keeps working, with a warning and the pass bound.
	s3, warnings, err := decodeSettings(with(map[string]any{"force_destroy_wait": "5m"}))
	if err != nil || s3.ForceDestroyWait != maxForceDestroyWait || len(warnings) != 1 || !strings.Contains(warnings[0], "backend_settings.force_destroy_wait") {
		t.Errorf("long force_destroy_wait: %v, %v, %v", s3.ForceDestroyWait, warnings, err)
	}
}

// The Keystone keys are the shared client's Connection, embedded: decoded, defaulted and
// validated as novainfra's are.
func TestSettingsEmbedTheConnection(t *testing.T) {
	s, _, err := decodeSettings(with(map[string]any{"region_name": "north", "user_domain_name": "Users", "interface": "internal"}))
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	want := osc.Connection{AuthURL: "https://keystone.example.com:5000/v3", Username: "admin", Password: secret.New("s3cret-password"),
		UserDomainName: "Users", ProjectName: "admin", ProjectDomainName: osc.DefaultDomain, RegionName: "north", Interface: "internal", VerifySSL: &yes}
	if diff := cmp.Diff(want, s.Connection, cmp.Comparer(func(a, b secret.Secret) bool { return a.Reveal() == b.Reveal() })); diff != "" {
		t.Errorf("connection (-want +got):\n%s", diff)
	}
}

func TestNamesAreLimitedToKeystoneLength(t *testing.T) {
	b, _, err := NewWithOptions(backends.Params{Settings: with(map[string]any{"tenant_prefix": "os-"})}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := b.namesFor("physics-dm")
	if err != nil || n != (names{project: "os-physics-dm", network: "os-physics-dm-int-net", subnet: "os-physics-dm-sub-net",
		router: "os-physics-dm-router", user: "os-physics-dm"}) {
		t.Fatalf("names = %+v, %v", n, err)
	}
	if _, err := b.namesFor(strings.Repeat("a", 62)); err == nil {
		t.Fatal("a 65-character project name must be refused")
	}
}

// The default groups are the ones Waldur's OpenStack plugin creates in every tenant (seed 003:
// "SSH (22), ping (ICMP), RDP (3389), web (80, 443)"), each open to the world on IPv4.
func TestDefaultSecurityGroupsAreWaldursList(t *testing.T) {
	s, _, err := decodeSettings(with(nil))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, g := range s.SecurityGroups {
		for _, r := range g.Rules {
			if r.Direction != "ingress" || r.RemoteIPPrefix != "0.0.0.0/0" {
				t.Errorf("group %s rule %+v: want ingress from 0.0.0.0/0", g.Name, r)
			}
			got[g.Name] = append(got[g.Name], fmt.Sprintf("%s %d-%d", r.Protocol, r.PortRangeMin, r.PortRangeMax))
		}
	}
	want := map[string][]string{
		"ssh": {"tcp 22-22"}, "ping": {"icmp 0-0"}, "rdp": {"tcp 3389-3389"}, "web": {"tcp 80-80", "tcp 443-443"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("default security groups (-seed 003 +got):\n%s", diff)
	}
}
