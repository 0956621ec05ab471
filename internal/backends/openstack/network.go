package openstack

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	osc "github.com/waldur/site-agent/internal/clients/openstack"
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

var neutronErr = osc.NeutronErr

func (b *Backend) ensureNetwork(ctx context.Context, c *clients, projectID, name string) (string, error) {
	return osc.EnsureNetwork(ctx, c.network, projectID, name)
}

func (b *Backend) ensureRouter(ctx context.Context, c *clients, projectID, name string) (string, error) {
	return osc.EnsureRouter(ctx, c.network, projectID, name, c.extNetID)
}

// ensureInterface connects the subnet to the router unless one of the router's ports is
// already on it.
func (b *Backend) ensureInterface(ctx context.Context, c *clients, routerID, subnetID string) error {
	return osc.EnsureInterface(ctx, c.network, routerID, subnetID)
}
