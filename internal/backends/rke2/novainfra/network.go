package novainfra

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"

	"github.com/waldur/site-agent/internal/backends/rke2"
	osc "github.com/waldur/site-agent/internal/clients/openstack"
)

// chainName names a cluster's network, subnet, router and security group.
func chainName(c rke2.ClusterRef) string { return "rke2-" + c.Name + "-" + c.UUID }

// clusterDesc marks the ports and floating IPs of a cluster.
func clusterDesc(c rke2.ClusterRef) string { return "rke2-cluster=" + c.UUID }

// rule is one ingress rule of the cluster's group; fromGroup limits it to the group's members.
type rule struct {
	proto     string
	min, max  int
	fromGroup bool
}

// clusterRules: the Kubernetes API (6443) and web (80/443) from anywhere, ICMP, and the
// supervisor (9345), kubelet (10250) and everything else between the cluster's nodes.
var clusterRules = []rule{
	{proto: "tcp", min: 6443, max: 6443},
	{proto: "tcp", min: 80, max: 80},
	{proto: "tcp", min: 443, max: 443},
	{proto: "icmp"},
	{proto: "tcp", min: 9345, max: 9345, fromGroup: true},
	{proto: "tcp", min: 10250, max: 10250, fromGroup: true},
	{proto: "", fromGroup: true},
}

// EnsureNetwork finds or makes the cluster's network, subnet, router (gateway on the
// external network, interface on the subnet) and security group in the shared tenant, or in
// the cluster's own project (made first, see clusterConn).
func (in *Infra) EnsureNetwork(ctx context.Context, c rke2.ClusterRef) (rke2.NetworkInfo, error) {
	var ni rke2.NetworkInfo
	cl, err := in.clusterConn(ctx, c, true)
	if err != nil {
		return ni, err
	}
	name := chainName(c)
	ni.ProjectID = cl.ProjectID
	sg, err := in.ensureGroup(ctx, cl, name)
	if err != nil {
		return ni, err
	}
	ni.SecurityGroups = []string{sg}
	if ni.NetworkID, err = osc.EnsureNetwork(ctx, cl.Network, cl.ProjectID, name); err != nil {
		return ni, err
	}
	if ni.SubnetID, err = in.ensureSubnet(ctx, cl, ni.NetworkID, name); err != nil {
		return ni, err
	}
	router, err := osc.EnsureRouter(ctx, cl.Network, cl.ProjectID, name, cl.extNetID)
	if err != nil {
		return ni, err
	}
	return ni, osc.EnsureInterface(ctx, cl.Network, router, ni.SubnetID)
}

func (in *Infra) ensureSubnet(ctx context.Context, cl *conn, networkID, name string) (string, error) {
	page, err := subnets.List(cl.Network, subnets.ListOpts{Name: name, NetworkID: networkID}).AllPages(ctx)
	if err != nil {
		return "", osc.NeutronErr("find subnet "+name, err)
	}
	found, err := subnets.ExtractSubnets(page)
	if err != nil {
		return "", err
	}
	if len(found) > 0 {
		return found[0].ID, nil
	}
	o := in.settings.OpenStack
	sn, err := subnets.Create(ctx, cl.Network, subnets.CreateOpts{NetworkID: networkID, Name: name, CIDR: o.SubnetCIDR,
		IPVersion: gophercloud.IPv4, ProjectID: cl.ProjectID, DNSNameservers: o.DNSNameservers}).Extract()
	if err != nil {
		return "", osc.NeutronErr("create subnet "+name, err)
	}
	return sn.ID, nil
}

// findGroups lists the tenant's security groups of a name.
func findGroups(ctx context.Context, cl *conn, name string) ([]groups.SecGroup, error) {
	page, err := groups.List(cl.Network, groups.ListOpts{Name: name, ProjectID: cl.ProjectID}).AllPages(ctx)
	if err != nil {
		return nil, osc.NeutronErr("find security group "+name, err)
	}
	return groups.ExtractGroups(page)
}

func (in *Infra) ensureGroup(ctx context.Context, cl *conn, name string) (string, error) {
	found, err := findGroups(ctx, cl, name)
	if err != nil {
		return "", err
	}
	var g groups.SecGroup
	if len(found) > 0 {
		g = found[0]
	} else {
		made, err := groups.Create(ctx, cl.Network, groups.CreateOpts{Name: name, ProjectID: cl.ProjectID,
			Description: "site-agent rke2 cluster nodes"}).Extract()
		if err != nil {
			return "", osc.NeutronErr("create security group "+name, err)
		}
		g = *made
	}
	for _, r := range clusterRules {
		if hasRule(g, r) {
			continue
		}
		opts := rules.CreateOpts{Direction: rules.DirIngress, EtherType: rules.EtherType4, SecGroupID: g.ID,
			Protocol: rules.RuleProtocol(r.proto), PortRangeMin: r.min, PortRangeMax: r.max, ProjectID: cl.ProjectID}
		if r.fromGroup {
			opts.RemoteGroupID = g.ID
		} else {
			opts.RemoteIPPrefix = "0.0.0.0/0"
		}
		_, err := rules.Create(ctx, cl.Network, opts).Extract()
		if err != nil && !gophercloud.ResponseCodeIs(err, 409) { // 409: made by an interrupted pass
			return "", osc.NeutronErr(fmt.Sprintf("create rule %s %d-%d in %s", r.proto, r.min, r.max, name), err)
		}
	}
	return g.ID, nil
}

func hasRule(g groups.SecGroup, r rule) bool {
	for _, h := range g.Rules {
		if h.Direction != "ingress" || h.EtherType != "IPv4" || h.Protocol != r.proto || h.PortRangeMin != r.min || h.PortRangeMax != r.max {
			continue
		}
		if r.fromGroup && h.RemoteGroupID == g.ID || !r.fromGroup && h.RemoteGroupID == "" && (h.RemoteIPPrefix == "0.0.0.0/0" || h.RemoteIPPrefix == "") {
			return true
		}
	}
	return false
}
