package novainfra

import (
	"context"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"

	"github.com/waldur/site-agent/internal/backends/rke2"
	osc "github.com/waldur/site-agent/internal/clients/openstack"
)

// chainName names a cluster's network, subnet, router and security group.
func chainName(c rke2.ClusterRef) string { return "rke2-" + c.Name + "-" + c.UUID }

// clusterDesc marks the ports and floating IPs of a cluster.
func clusterDesc(c rke2.ClusterRef) string { return "rke2-cluster=" + c.UUID }

// EnsureNetwork finds or makes the cluster's network, subnet, router (gateway on the
// external network, interface on the subnet) and security group in the shared tenant, or in
// the cluster's own project (made first, see clusterConn). A chain ensured in this process
// less than chainTTL ago is taken as it is (chains.go).
func (in *Infra) EnsureNetwork(ctx context.Context, c rke2.ClusterRef) (rke2.NetworkInfo, error) {
	if ni, ok := in.knownChain(c.UUID); ok {
		return ni, nil
	}
	ni, err := in.ensureNetwork(ctx, c)
	if err == nil {
		in.rememberChain(c.UUID, ni)
	}
	return ni, err
}

func (in *Infra) ensureNetwork(ctx context.Context, c rke2.ClusterRef) (rke2.NetworkInfo, error) {
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
