package openstack

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"github.com/waldur/site-agent/internal/failure"
)

// networkIDs are the tenant's internal network objects.
type networkIDs struct{ network, subnet, router string }

// ensureNetworking makes the security groups, network, subnet and router of a tenant exist.
func (b *Backend) ensureNetworking(ctx context.Context, c *clients, projectID string, n names) (networkIDs, error) {
	var ids networkIDs
	if err := b.ensureSecurityGroups(ctx, c, projectID); err != nil {
		return ids, err
	}
	var err error
	if ids.network, err = b.ensureNetwork(ctx, c, projectID, n.network); err != nil {
		return ids, err
	}
	if ids.subnet, err = b.ensureSubnet(ctx, c, projectID, ids.network, n.subnet); err != nil {
		return ids, err
	}
	if ids.router, err = b.ensureRouter(ctx, c, projectID, n.router); err != nil {
		return ids, err
	}
	return ids, b.ensureInterface(ctx, c, ids.router, ids.subnet)
}

func neutronErr(what string, err error) error {
	err = classify("neutron", fmt.Errorf("%s: %w", what, err))
	if failure.HasStatus(err, 409) && strings.Contains(err.Error(), "Quota exceeded") {
		return failure.Wrap(err, "the tenant's limits leave no room for its own network objects ("+what+
			"); allow at least 1 network, subnet, router and port, and the configured security groups and rules")
	}
	return err
}

// ensureSecurityGroups creates the configured groups and their missing rules. Two list calls
// cover every group and rule of the project.
func (b *Backend) ensureSecurityGroups(ctx context.Context, c *clients, projectID string) error {
	if len(b.settings.SecurityGroups) == 0 {
		return nil
	}
	page, err := groups.List(c.network, groups.ListOpts{ProjectID: projectID}).AllPages(ctx)
	if err != nil {
		return neutronErr("list security groups", err)
	}
	existing, err := groups.ExtractGroups(page)
	if err != nil {
		return err
	}
	byName := map[string]groups.SecGroup{}
	for _, g := range existing {
		byName[g.Name] = g
	}
	for _, want := range b.settings.SecurityGroups {
		g, ok := byName[want.Name]
		if !ok {
			created, err := groups.Create(ctx, c.network, groups.CreateOpts{Name: want.Name, Description: want.Description, ProjectID: projectID}).Extract()
			if err != nil {
				return neutronErr("create security group "+want.Name, err)
			}
			g = *created
		}
		for _, r := range want.Rules {
			if hasRule(g.Rules, r) {
				continue
			}
			if err := createRule(ctx, c, projectID, g.ID, r); err != nil {
				return err
			}
		}
	}
	return nil
}

func createRule(ctx context.Context, c *clients, projectID, groupID string, r Rule) error {
	_, err := rules.Create(ctx, c.network, rules.CreateOpts{
		Direction: rules.RuleDirection(r.Direction), EtherType: rules.RuleEtherType(r.Ethertype), SecGroupID: groupID,
		Protocol: rules.RuleProtocol(r.Protocol), PortRangeMin: r.PortRangeMin, PortRangeMax: r.PortRangeMax,
		RemoteIPPrefix: r.RemoteIPPrefix, ProjectID: projectID,
	}).Extract()
	if gophercloud.ResponseCodeIs(err, 409) {
		return nil // SecurityGroupRuleExists: created by an earlier, interrupted pass
	}
	if err != nil {
		return neutronErr(fmt.Sprintf("create %s rule %s/%d-%d in security group %s", r.Direction, r.Protocol, r.PortRangeMin, r.PortRangeMax, groupID), err)
	}
	return nil
}

// hasRule reports whether a group already has an equivalent rule.
func hasRule(have []rules.SecGroupRule, r Rule) bool {
	for _, h := range have {
		if h.Direction == r.Direction && h.EtherType == r.Ethertype && h.Protocol == r.Protocol &&
			h.PortRangeMin == r.PortRangeMin && h.PortRangeMax == r.PortRangeMax && h.RemoteGroupID == "" &&
			samePrefix(h.RemoteIPPrefix, r.RemoteIPPrefix) {
			return true
		}
	}
	return false
}

// samePrefix compares remote prefixes; "" (Neutron's "anywhere") equals 0.0.0.0/0 and ::/0.
func samePrefix(a, b string) bool {
	norm := func(s string) string {
		if s == "" || s == "0.0.0.0/0" || s == "::/0" {
			return "any"
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			return p.Masked().String()
		}
		return s
	}
	return norm(a) == norm(b)
}

func (b *Backend) ensureNetwork(ctx context.Context, c *clients, projectID, name string) (string, error) {
	page, err := networks.List(c.network, networks.ListOpts{Name: name, ProjectID: projectID}).AllPages(ctx)
	if err != nil {
		return "", neutronErr("find network "+name, err)
	}
	found, err := networks.ExtractNetworks(page)
	if err != nil {
		return "", err
	}
	if len(found) > 0 {
		return found[0].ID, nil
	}
	net, err := networks.Create(ctx, c.network, networks.CreateOpts{Name: name, ProjectID: projectID}).Extract()
	if err != nil {
		return "", neutronErr("create network "+name, err)
	}
	return net.ID, nil
}

func (b *Backend) ensureSubnet(ctx context.Context, c *clients, projectID, networkID, name string) (string, error) {
	page, err := subnets.List(c.network, subnets.ListOpts{Name: name, NetworkID: networkID}).AllPages(ctx)
	if err != nil {
		return "", neutronErr("find subnet "+name, err)
	}
	found, err := subnets.ExtractSubnets(page)
	if err != nil {
		return "", err
	}
	if len(found) > 0 {
		return found[0].ID, nil
	}
	s := b.settings
	opts := subnets.CreateOpts{NetworkID: networkID, Name: name, CIDR: s.SubnetCIDR, IPVersion: gophercloud.IPv4,
		ProjectID: projectID, DNSNameservers: s.DNSNameservers}
	if p := s.AllocationPool; p != nil {
		opts.AllocationPools = []subnets.AllocationPool{{Start: p.Start, End: p.End}}
	}
	sn, err := subnets.Create(ctx, c.network, opts).Extract()
	if err != nil {
		return "", neutronErr("create subnet "+name, err)
	}
	return sn.ID, nil
}

func (b *Backend) ensureRouter(ctx context.Context, c *clients, projectID, name string) (string, error) {
	page, err := routers.List(c.network, routers.ListOpts{Name: name, ProjectID: projectID}).AllPages(ctx)
	if err != nil {
		return "", neutronErr("find router "+name, err)
	}
	found, err := routers.ExtractRouters(page)
	if err != nil {
		return "", err
	}
	gw := &routers.GatewayInfo{NetworkID: c.extNetID}
	if len(found) == 0 {
		r, err := routers.Create(ctx, c.network, routers.CreateOpts{Name: name, ProjectID: projectID, GatewayInfo: gw}).Extract()
		if err != nil {
			return "", neutronErr("create router "+name, err)
		}
		return r.ID, nil
	}
	r := found[0]
	if r.GatewayInfo.NetworkID != c.extNetID {
		if _, err := routers.Update(ctx, c.network, r.ID, routers.UpdateOpts{GatewayInfo: gw}).Extract(); err != nil {
			return "", neutronErr("set gateway of router "+name, err)
		}
	}
	return r.ID, nil
}

// ensureInterface connects the subnet to the router unless one of the router's ports is
// already on it.
func (b *Backend) ensureInterface(ctx context.Context, c *clients, routerID, subnetID string) error {
	attached, err := routerPorts(ctx, c, routerID)
	if err != nil {
		return err
	}
	for _, p := range attached {
		for _, ip := range p.FixedIPs {
			if ip.SubnetID == subnetID {
				return nil
			}
		}
	}
	_, err = routers.AddInterface(ctx, c.network, routerID, routers.AddInterfaceOpts{SubnetID: subnetID}).Extract()
	if gophercloud.ResponseCodeIs(err, 400) && strings.Contains(err.Error(), "already has a port") {
		return nil
	}
	if err != nil {
		return neutronErr("connect subnet "+subnetID+" to router "+routerID, err)
	}
	return nil
}

// routerPorts lists the ports of a router (interfaces and gateway).
func routerPorts(ctx context.Context, c *clients, routerID string) ([]ports.Port, error) {
	page, err := ports.List(c.network, ports.ListOpts{DeviceID: routerID}).AllPages(ctx)
	if err != nil {
		return nil, neutronErr("list ports of router "+routerID, err)
	}
	return ports.ExtractPorts(page)
}

// isInterface reports whether a router port is an interface (not the gateway).
func isInterface(p ports.Port) bool {
	return strings.HasPrefix(p.DeviceOwner, "network:router_interface") ||
		p.DeviceOwner == "network:ha_router_replicated_interface"
}
