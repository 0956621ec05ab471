package openstack

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	osc "github.com/waldur/site-agent/internal/clients/openstack"
)

// Settings are the backend_settings the openstack backend reads.
type Settings struct {
	// Connection is the Keystone connection of an account with the admin role (auth_url,
	// username, password, … at the top of backend_settings).
	osc.Connection `mapstructure:",squash"`

	// Domain holds the tenant projects (and tenant users); UserDomain is where team members are
	// looked up by name (default: Domain).
	Domain       string `mapstructure:"domain"`
	UserDomain   string `mapstructure:"user_domain"`
	TenantPrefix string `mapstructure:"tenant_prefix"`
	MemberRole   string `mapstructure:"member_role"`

	ExternalNetwork string          `mapstructure:"external_network"` // name or id
	SubnetCIDR      string          `mapstructure:"subnet_cidr"`
	AllocationPool  *Pool           `mapstructure:"allocation_pool"`
	DNSNameservers  []string        `mapstructure:"dns_nameservers"`
	SecurityGroups  []SecurityGroup `mapstructure:"security_groups"`

	CreateTenantUser bool   `mapstructure:"create_tenant_user"`
	CredentialsPath  string `mapstructure:"credentials_path"`
	ForceDestroy     bool   `mapstructure:"force_destroy"`
	// DownscaleFactor multiplies every limit while a resource is downscaled (default 0.5).
	DownscaleFactor *float64 `mapstructure:"downscale_factor"`

	RequestTimeout time.Duration `mapstructure:"request_timeout"` // one HTTP attempt (default 60s)
	Retries        *int          `mapstructure:"retries"`         // per request (default 4)
	// UsageConcurrency bounds the tenants measured at once in a usage pass (default 8).
	UsageConcurrency int `mapstructure:"usage_concurrency"`
	// ForceDestroyWait bounds how long one terminate pass waits for force_destroy's deletions
	// (default 10s, at most 2m); what is left is finished by the next pass.
	ForceDestroyWait time.Duration `mapstructure:"force_destroy_wait"`
}

// Pool is a subnet allocation pool.
type Pool struct {
	Start string `mapstructure:"start"`
	End   string `mapstructure:"end"`
}

// SecurityGroup is one security group created in every tenant.
type SecurityGroup struct {
	Name        string `mapstructure:"name"`
	Description string `mapstructure:"description"`
	Rules       []Rule `mapstructure:"rules"`
}

// Rule is one security group rule. Protocol "" or "any" allows every protocol; ports apply
// to tcp and udp only.
type Rule struct {
	Direction      string `mapstructure:"direction"` // ingress (default) or egress
	Ethertype      string `mapstructure:"ethertype"` // IPv4 (default) or IPv6
	Protocol       string `mapstructure:"protocol"`  // tcp, udp, icmp, any
	PortRangeMin   int    `mapstructure:"port_range_min"`
	PortRangeMax   int    `mapstructure:"port_range_max"`
	RemoteIPPrefix string `mapstructure:"remote_ip_prefix"` // default 0.0.0.0/0 (::/0 for IPv6)
}

// DefaultSecurityGroups are created when security_groups is not configured: the list Waldur's
// OpenStack plugin creates in every tenant (SSH, ping, RDP, web).
func DefaultSecurityGroups() []SecurityGroup {
	tcp := func(port int) Rule { return Rule{Protocol: "tcp", PortRangeMin: port, PortRangeMax: port} }
	return []SecurityGroup{
		{Name: "ssh", Description: "SSH from anywhere", Rules: []Rule{tcp(22)}},
		{Name: "ping", Description: "ICMP from anywhere", Rules: []Rule{{Protocol: "icmp"}}},
		{Name: "rdp", Description: "Remote desktop (RDP) from anywhere", Rules: []Rule{tcp(3389)}},
		{Name: "web", Description: "HTTP and HTTPS from anywhere", Rules: []Rule{tcp(80), tcp(443)}},
	}
}

const (
	maxForceDestroyWait = 2 * time.Minute
	defaultSubnetCIDR   = "192.168.42.0/24"
	defaultMemberRole   = "member"
)

// applyDefaults fills in every optional setting.
func (s *Settings) applyDefaults() {
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	s.Connection.ApplyDefaults()
	def(&s.Domain, osc.DefaultDomain)
	def(&s.UserDomain, s.Domain)
	def(&s.MemberRole, defaultMemberRole)
	def(&s.SubnetCIDR, defaultSubnetCIDR)
	if s.DownscaleFactor == nil {
		f := 0.5
		s.DownscaleFactor = &f
	}
	if s.RequestTimeout == 0 {
		s.RequestTimeout = 60 * time.Second
	}
	if s.Retries == nil {
		n := 4
		s.Retries = &n
	}
	if s.UsageConcurrency == 0 {
		s.UsageConcurrency = 8
	}
	if s.ForceDestroyWait == 0 {
		s.ForceDestroyWait = 10 * time.Second
	}
	if s.SecurityGroups == nil {
		s.SecurityGroups = DefaultSecurityGroups()
	}
	for i := range s.SecurityGroups {
		for j := range s.SecurityGroups[i].Rules {
			r := &s.SecurityGroups[i].Rules[j]
			def(&r.Direction, "ingress")
			def(&r.Ethertype, "IPv4")
			if r.Protocol == "any" {
				r.Protocol = ""
			}
			if r.RemoteIPPrefix == "" {
				r.RemoteIPPrefix = "0.0.0.0/0"
				if r.Ethertype == "IPv6" {
					r.RemoteIPPrefix = "::/0"
				}
			}
		}
	}
}

// validate checks the settings after defaults; errors name the key.
func (s *Settings) validate() error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	errs = append(errs, s.Connection.Validate("backend_settings."))
	if strings.TrimSpace(s.ExternalNetwork) == "" {
		fail("backend_settings.external_network: is required")
	}
	if *s.DownscaleFactor < 0 || *s.DownscaleFactor > 1 {
		fail("backend_settings.downscale_factor: must be between 0 and 1, got %v", *s.DownscaleFactor)
	}
	if *s.Retries < 0 || *s.Retries > 20 {
		fail("backend_settings.retries: must be between 0 and 20, got %d", *s.Retries)
	}
	if s.RequestTimeout < 0 || s.UsageConcurrency < 0 || s.ForceDestroyWait < 0 {
		fail("backend_settings: request_timeout, usage_concurrency and force_destroy_wait must not be negative")
	}
	if len(s.TenantPrefix) > 32 {
		fail("backend_settings.tenant_prefix: at most 32 characters (Keystone names are at most 64), got %d", len(s.TenantPrefix))
	}
	if s.CreateTenantUser && strings.Trim(s.CredentialsPath, "/") == "" {
		fail("backend_settings.credentials_path: is required when create_tenant_user is set (the secret store path prefix for tenant credentials)")
	}
	errs = append(errs, s.validateNetwork(), validateGroups(s.SecurityGroups))
	return errors.Join(errs...) // every problem at once (errors.Join drops the nils)
}

func (s *Settings) validateNetwork() error {
	prefix, err := netip.ParsePrefix(s.SubnetCIDR)
	if err != nil || !prefix.Addr().Is4() || prefix.Bits() > 29 || prefix.Masked() != prefix {
		return fmt.Errorf("backend_settings.subnet_cidr: want an IPv4 network such as %s (at most /29), got %q", defaultSubnetCIDR, s.SubnetCIDR)
	}
	if p := s.AllocationPool; p != nil {
		start, err1 := netip.ParseAddr(p.Start)
		end, err2 := netip.ParseAddr(p.End)
		if err1 != nil || err2 != nil || !prefix.Contains(start) || !prefix.Contains(end) || end.Less(start) {
			return fmt.Errorf("backend_settings.allocation_pool: start and end must be addresses in %s with start <= end, got %q–%q", s.SubnetCIDR, p.Start, p.End)
		}
		if gw := prefix.Addr().Next(); !gw.Less(start) {
			return fmt.Errorf("backend_settings.allocation_pool: must not contain the gateway %s", gw)
		}
	}
	for i, ns := range s.DNSNameservers {
		if _, err := netip.ParseAddr(ns); err != nil {
			return fmt.Errorf("backend_settings.dns_nameservers[%d]: not an IP address: %q", i, ns)
		}
	}
	return nil
}

func validateGroups(groups []SecurityGroup) error {
	seen := map[string]bool{}
	for i, g := range groups {
		key := fmt.Sprintf("backend_settings.security_groups[%d]", i)
		switch {
		case strings.TrimSpace(g.Name) == "":
			return fmt.Errorf("%s.name: is required", key)
		case g.Name == "default":
			return fmt.Errorf("%s.name: \"default\" is the group Neutron creates itself; choose another name", key)
		case seen[g.Name]:
			return fmt.Errorf("%s.name: %q appears twice", key, g.Name)
		}
		seen[g.Name] = true
		for j, r := range g.Rules {
			if err := r.validate(); err != nil {
				return fmt.Errorf("%s.rules[%d]: %w", key, j, err)
			}
		}
	}
	return nil
}

func (r Rule) validate() error {
	if r.Direction != "ingress" && r.Direction != "egress" {
		return fmt.Errorf("direction must be ingress or egress, got %q", r.Direction)
	}
	if r.Ethertype != "IPv4" && r.Ethertype != "IPv6" {
		return fmt.Errorf("ethertype must be IPv4 or IPv6, got %q", r.Ethertype)
	}
	switch r.Protocol {
	case "tcp", "udp":
		if r.PortRangeMin < 1 || r.PortRangeMax < r.PortRangeMin || r.PortRangeMax > 65535 {
			return fmt.Errorf("%s needs 1 <= port_range_min <= port_range_max <= 65535, got %d–%d", r.Protocol, r.PortRangeMin, r.PortRangeMax)
		}
	case "icmp", "":
		if r.PortRangeMin != 0 || r.PortRangeMax != 0 {
			return fmt.Errorf("ports apply to tcp and udp only")
		}
	default:
		return fmt.Errorf("protocol must be tcp, udp, icmp or any, got %q", r.Protocol)
	}
	p, err := netip.ParsePrefix(r.RemoteIPPrefix)
	if err != nil || p.Addr().Is4() != (r.Ethertype == "IPv4") {
		return fmt.Errorf("remote_ip_prefix %q is not an %s network", r.RemoteIPPrefix, r.Ethertype)
	}
	return nil
}

// certPool loads ca_cert (nil when not configured).
func (s *Settings) certPool() (*x509.CertPool, error) {
	return s.Connection.CertPool("backend_settings.")
}

// decodeSettings decodes, defaults and validates backend_settings.
func decodeSettings(in backends.Settings) (Settings, []string, error) {
	var s Settings
	warnings, err := backends.DecodeSettings(in, &s)
	if err != nil {
		return s, warnings, err
	}
	s.applyDefaults()
	if s.ForceDestroyWait > maxForceDestroyWait {
		// Files written for the old default (5m) keep working: a pass stays short and deletion
		// goes on in the next pass, so a longer wait only delays the other resources.
		warnings = append(warnings, fmt.Sprintf("backend_settings.force_destroy_wait: %s is more than a pass may wait; using %s (deletion goes on in the next pass)", s.ForceDestroyWait, maxForceDestroyWait))
		s.ForceDestroyWait = maxForceDestroyWait
	}
	return s, warnings, s.validate()
}
