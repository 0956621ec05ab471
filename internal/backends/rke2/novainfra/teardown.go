package novainfra

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/rke2"
	osc "github.com/waldur/site-agent/internal/clients/openstack"
	"github.com/waldur/site-agent/internal/clients/openstack/tenant"
	"github.com/waldur/site-agent/internal/failure"
)

// DeleteServer releases the server's floating IPs, deletes the server (its volumes go with
// it: delete_on_termination) and its port. An absent server is success.
func (in *Infra) DeleteServer(ctx context.Context, c rke2.ClusterRef, s rke2.ServerView) error {
	cl, err := in.clusterConn(ctx, c, false)
	if err != nil || cl == nil {
		return err
	}
	pts, err := serverPorts(ctx, cl, s.ID)
	if err != nil {
		return err
	}
	if len(pts) == 0 {
		// Still building: Nova has not bound the port yet, and would only unbind it later.
		if pts, err = unboundNodePorts(ctx, cl, c, s); err != nil {
			return err
		}
	}
	for _, p := range pts {
		fips, err := listFIPs(ctx, cl, floatingips.ListOpts{PortID: p.ID})
		if err != nil {
			return err
		}
		if err := deleteFIPs(ctx, cl, fips); err != nil {
			return err
		}
	}
	err = servers.Delete(ctx, cl.compute, s.ID).ExtractErr()
	if err != nil && !osc.IsNotFound(err) {
		return osc.Classify("nova", fmt.Errorf("delete server %s: %w", s.Name, err))
	}
	for _, p := range pts {
		if p.Description != clusterDesc(c) {
			continue // a port Nova made goes with the server
		}
		if err := ports.Delete(ctx, cl.Network, p.ID).ExtractErr(); err != nil && !osc.IsNotFound(err) {
			return osc.NeutronErr("delete port "+p.Name, err)
		}
	}
	backends.Log(ctx, in.log).Info("server deleted", zap.String("cluster", c.Name), zap.String("server", s.Name), zap.String("id", s.ID))
	return nil
}

// unboundNodePorts are the node's unbound ports in the cluster, unless another live server
// of the node's name (a twin still being built) may be waiting for one of them.
func unboundNodePorts(ctx context.Context, cl *conn, c rke2.ClusterRef, s rke2.ServerView) ([]ports.Port, error) {
	all, err := cl.servers(ctx, c)
	if err != nil {
		return nil, err
	}
	for i := range all {
		if all[i].ID != s.ID && all[i].Name == s.Name && !going(&all[i]) {
			return nil, nil
		}
	}
	page, err := ports.List(cl.Network, ports.ListOpts{Name: s.Name}).AllPages(ctx)
	if err != nil {
		return nil, osc.NeutronErr("find port "+s.Name, err)
	}
	found, err := ports.ExtractPorts(page)
	if err != nil {
		return nil, err
	}
	var out []ports.Port
	for _, p := range found {
		if p.DeviceID == "" && p.Description == clusterDesc(c) {
			out = append(out, p)
		}
	}
	return out, nil
}

func deleteFIPs(ctx context.Context, cl *conn, fips []floatingips.FloatingIP) error {
	for _, f := range fips {
		if err := floatingips.Delete(ctx, cl.Network, f.ID).ExtractErr(); err != nil && !osc.IsNotFound(err) {
			return osc.NeutronErr("delete floating IP "+f.FloatingIP, err)
		}
	}
	return nil
}

// TearDown deletes what EnsureNetwork made, with the cluster's left-over ports, floating IPs
// (clusterNetwork) and key pairs. Servers of the cluster, or foreign servers on its network, block it: the
// error names them. Servers Nova is still deleting make it wait (failure.ErrNotReady): their
// ports and volumes go with them a moment later. A cluster's own project (per_cluster) is
// deleted last; an absent one means the cluster is gone.
func (in *Infra) TearDown(ctx context.Context, c rke2.ClusterRef) error {
	in.forgetChain(c.UUID)
	cl, err := in.clusterConn(ctx, c, false)
	if err != nil || cl == nil {
		return err
	}
	all, err := cl.servers(ctx, c)
	if err != nil {
		return err
	}
	var live, deleting []servers.Server
	for i := range all {
		if going(&all[i]) {
			deleting = append(deleting, all[i])
		} else {
			live = append(live, all[i])
		}
	}
	if len(live) > 0 {
		return failure.Errorf("openstack: cluster %s still has servers %s; delete its nodes first", c.Name, serverNames(live))
	}
	if len(deleting) > 0 {
		return fmt.Errorf("openstack: cluster %s: Nova is still deleting %s: %w", c.Name, serverNames(deleting), failure.ErrNotReady)
	}
	if err := clusterNetwork(c, cl.ProjectID).Run(ctx, cl.Network); err != nil {
		return err
	}
	if err := in.deleteKeypairs(ctx, cl, c); err != nil {
		return err
	}
	if in.settings.OpenStack.PerCluster() {
		return in.dropProject(ctx, cl, c)
	}
	return nil
}

// clusterNetwork is the teardown of a cluster's network chain in its project: the network,
// subnet, router and security group named after it (chainName), its ports that lost their
// server (bound ones go with it) and its floating IPs.
func clusterNetwork(c rke2.ClusterRef, projectID string) tenant.NetworkTeardown {
	return tenant.NetworkTeardown{ProjectID: projectID, Name: chainName(c), Delete: func(o tenant.NetObject) bool {
		switch o.Kind {
		case tenant.FloatingIPs:
			return strings.HasPrefix(o.Description, clusterDesc(c)+" ")
		case tenant.Ports:
			return o.Description == clusterDesc(c) && o.DeviceID == ""
		case tenant.Subnets:
			return false // deleted with their network
		}
		return true // routers, networks and security groups, listed by name
	}}
}

func serverNames(all []servers.Server) string {
	names := make([]string, 0, len(all))
	for _, s := range all {
		names = append(names, s.Name+" ("+s.ID+")")
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func findNetworks(ctx context.Context, cl *conn, name string) ([]networks.Network, error) {
	page, err := networks.List(cl.Network, networks.ListOpts{Name: name, ProjectID: cl.ProjectID}).AllPages(ctx)
	if err != nil {
		return nil, osc.NeutronErr("find network "+name, err)
	}
	return networks.ExtractNetworks(page)
}

func (in *Infra) deleteKeypairs(ctx context.Context, cl *conn, c rke2.ClusterRef) error {
	page, err := keypairs.List(cl.compute, nil).AllPages(ctx)
	if err != nil {
		return osc.Classify("nova", fmt.Errorf("list key pairs: %w", err))
	}
	all, err := keypairs.ExtractKeyPairs(page)
	if err != nil {
		return err
	}
	for _, k := range all {
		if !strings.HasPrefix(k.Name, "rke2-"+c.UUID+"-") {
			continue
		}
		if err := keypairs.Delete(ctx, cl.compute, k.Name, nil).ExtractErr(); err != nil && !osc.IsNotFound(err) {
			return osc.Classify("nova", fmt.Errorf("delete key pair %s: %w", k.Name, err))
		}
	}
	return nil
}
