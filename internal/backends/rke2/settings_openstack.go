package rke2

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	osc "github.com/waldur/site-agent/internal/clients/openstack"
)

// OpenStackSettings is the backend_settings.openstack block: where the clusters' VMs live.
// The connection keys are the openstack backend's (auth_url, username, password,
// user_domain_name, project_name, project_domain_name, region_name, interface, verify_ssl,
// ca_cert). With tenant: shared (the default) every cluster's network chain and VMs are made
// in the project the connection is scoped to (project_name); with tenant: per_cluster each
// cluster gets its own project (rke2-<resource uuid>, in project_domain_name), with the tenant
// maxima as quotas and tenant_role granted to the connection's user.
type OpenStackSettings struct {
	osc.Connection `mapstructure:",squash"`
	// ExternalNetworkName is the router:external network the routers and floating IPs use.
	ExternalNetworkName string `mapstructure:"external_network_name"`
	// SubnetCIDR is every cluster network's subnet (each cluster has its own network and
	// router, so the ranges may repeat). It is used when a cluster's network is made: a
	// cluster keeps the subnet it was made with whatever the setting says later.
	SubnetCIDR string `mapstructure:"subnet_cidr"`
	// SSHAllowedCIDRs may reach the nodes on 22/tcp (the order's ssh_public_key); none: closed.
	SSHAllowedCIDRs []string `mapstructure:"ssh_allowed_cidrs"`
	// APIAllowedCIDRs may reach the Kubernetes API (6443/tcp); nil: from anywhere, [] closed
	// (the cluster's own nodes always may).
	APIAllowedCIDRs []string      `mapstructure:"api_allowed_cidrs"`
	DNSNameservers  []string      `mapstructure:"dns_nameservers"`
	RequestTimeout  time.Duration `mapstructure:"request_timeout"` // one HTTP attempt (default 60s)
	Retries         *int          `mapstructure:"retries"`         // per request (default 4)
	// Tenant is shared (one management project for every cluster) or per_cluster.
	Tenant string `mapstructure:"tenant"`
	// TenantRole is the role the connection's user gets on each cluster's project (per_cluster).
	TenantRole string `mapstructure:"tenant_role"`
	// ForceDestroy: terminate deletes what others made in the cluster's project or on its
	// network (servers, ports, volumes, load balancers, …) instead of refusing, naming them.
	ForceDestroy bool `mapstructure:"force_destroy"`
}

// Tenant modes.
const (
	TenantShared     = "shared"
	TenantPerCluster = "per_cluster"
)

// PerCluster reports whether each cluster has its own project.
func (o *OpenStackSettings) PerCluster() bool { return o.Tenant == TenantPerCluster }

const (
	osPrefix = "backend_settings.openstack."
	// defaultClusterSubnet: a /22 like the old default 10.42.0.0/22 (which lay inside RKE2's
	// pod network), outside RKE2's pod and service networks (10.42.0.0/16, 10.43.0.0/16) and
	// the usual alternatives (kubeadm's services 10.96.0.0/12, flannel's pods 10.244.0.0/16),
	// and away from 172.16.0.0/12 and 192.168.0.0/16 (Docker bridges, DevStack's public
	// network, Calico's default pool); docs/rke2.md.
	defaultClusterSubnet  = "10.200.0.0/22"
	defaultOSRetries      = 4
	defaultOSRequestLimit = 60 * time.Second
)

func (o *OpenStackSettings) applyDefaults() {
	o.ApplyDefaults()
	if o.SubnetCIDR == "" {
		o.SubnetCIDR = defaultClusterSubnet
	}
	if o.Tenant == "" {
		o.Tenant = TenantShared
	}
	if o.TenantRole == "" {
		o.TenantRole = "admin"
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = defaultOSRequestLimit
	}
	if o.Retries == nil {
		n := defaultOSRetries
		o.Retries = &n
	}
	if o.APIAllowedCIDRs == nil {
		o.APIAllowedCIDRs = []string{"0.0.0.0/0"}
	}
}

func (o *OpenStackSettings) validate() error {
	if err := o.Validate(osPrefix); err != nil {
		return err
	}
	if strings.TrimSpace(o.ExternalNetworkName) == "" {
		return fmt.Errorf("%sexternal_network_name: is required (routers and floating IPs use it)", osPrefix)
	}
	if o.Tenant != TenantShared && o.Tenant != TenantPerCluster {
		return fmt.Errorf("%stenant: must be %s or %s, got %q", osPrefix, TenantShared, TenantPerCluster, o.Tenant)
	}
	p, err := netip.ParsePrefix(o.SubnetCIDR)
	if err != nil || !p.Addr().Is4() || p.Bits() > 28 || p.Masked() != p {
		return fmt.Errorf("%ssubnet_cidr: want an IPv4 network such as %s (at most /28), got %q", osPrefix, defaultClusterSubnet, o.SubnetCIDR)
	}
	if err := checkCIDRs(osPrefix+"ssh_allowed_cidrs", o.SSHAllowedCIDRs); err != nil {
		return err
	}
	if err := checkCIDRs(osPrefix+"api_allowed_cidrs", o.APIAllowedCIDRs); err != nil {
		return err
	}
	for i, ns := range o.DNSNameservers {
		if _, err := netip.ParseAddr(ns); err != nil {
			return fmt.Errorf("%sdns_nameservers[%d]: not an IP address: %q", osPrefix, i, ns)
		}
	}
	if *o.Retries < 0 || *o.Retries > 20 {
		return fmt.Errorf("%sretries: must be between 0 and 20, got %d", osPrefix, *o.Retries)
	}
	if o.RequestTimeout < 0 {
		return fmt.Errorf("%srequest_timeout: must not be negative", osPrefix)
	}
	if _, err := o.CertPool(osPrefix); err != nil {
		return err
	}
	return nil
}

// checkCIDRs accepts masked IPv4 or IPv6 networks, each once: the security group's rules are
// compared with them as Neutron shows them back, so 10.0.0.1/24 is refused for 10.0.0.0/24.
func checkCIDRs(key string, list []string) error {
	seen := map[netip.Prefix]bool{}
	for i, v := range list {
		p, err := netip.ParsePrefix(v)
		if err != nil || p.Masked() != p {
			return fmt.Errorf("%s[%d]: want a network such as 192.0.2.0/24, got %q", key, i, v)
		}
		if seen[p] {
			return fmt.Errorf("%s[%d]: %s is listed twice", key, i, v)
		}
		seen[p] = true
	}
	return nil
}
