package novainfra

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/rke2"
	osc "github.com/waldur/site-agent/internal/clients/openstack"
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
// and key pairs. Servers of the cluster, or foreign servers on its network, block it: the
// error names them. Servers Nova is still deleting make it wait (failure.ErrNotReady): their
// ports and volumes go with them a moment later. A cluster's own project (per_cluster) is
// deleted last; an absent one means the cluster is gone.
func (in *Infra) TearDown(ctx context.Context, c rke2.ClusterRef) error {
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
	name := chainName(c)
	if err := in.releaseLeftovers(ctx, cl, c); err != nil {
		return err
	}
	nets, err := findNetworks(ctx, cl, name)
	if err != nil {
		return err
	}
	if err := in.deleteRouters(ctx, cl, name); err != nil {
		return err
	}
	for _, n := range nets {
		if err := in.deleteNetwork(ctx, cl, c, n); err != nil {
			return err
		}
	}
	if err := deleteGroups(ctx, cl, name); err != nil {
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

// deleteGroups deletes the project's security groups of that name ("": all of them).
func deleteGroups(ctx context.Context, cl *conn, name string) error {
	sgs, err := findGroups(ctx, cl, name)
	if err != nil {
		return err
	}
	for _, g := range sgs {
		if err := groups.Delete(ctx, cl.Network, g.ID).ExtractErr(); err != nil && !osc.IsNotFound(err) {
			return osc.NeutronErr("delete security group "+g.Name, err)
		}
	}
	return nil
}

func serverNames(all []servers.Server) string {
	names := make([]string, 0, len(all))
	for _, s := range all {
		names = append(names, s.Name+" ("+s.ID+")")
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// releaseLeftovers deletes the cluster's floating IPs that lost their server.
func (in *Infra) releaseLeftovers(ctx context.Context, cl *conn, c rke2.ClusterRef) error {
	fips, err := listFIPs(ctx, cl, floatingips.ListOpts{})
	if err != nil {
		return err
	}
	var ours []floatingips.FloatingIP
	for _, f := range fips {
		if strings.HasPrefix(f.Description, clusterDesc(c)+" ") {
			ours = append(ours, f)
		}
	}
	return deleteFIPs(ctx, cl, ours)
}

func findNetworks(ctx context.Context, cl *conn, name string) ([]networks.Network, error) {
	page, err := networks.List(cl.Network, networks.ListOpts{Name: name, ProjectID: cl.ProjectID}).AllPages(ctx)
	if err != nil {
		return nil, osc.NeutronErr("find network "+name, err)
	}
	return networks.ExtractNetworks(page)
}

func (in *Infra) deleteRouters(ctx context.Context, cl *conn, name string) error {
	page, err := routers.List(cl.Network, routers.ListOpts{Name: name, ProjectID: cl.ProjectID}).AllPages(ctx)
	if err != nil {
		return osc.NeutronErr("find router "+name, err)
	}
	found, err := routers.ExtractRouters(page)
	if err != nil {
		return err
	}
	for _, r := range found {
		pts, err := osc.RouterPorts(ctx, cl.Network, r.ID)
		if err != nil {
			return err
		}
		for _, p := range pts {
			if !strings.HasPrefix(p.DeviceOwner, "network:router_interface") {
				continue
			}
			_, err := routers.RemoveInterface(ctx, cl.Network, r.ID, routers.RemoveInterfaceOpts{PortID: p.ID}).Extract()
			if err != nil && !osc.IsNotFound(err) {
				return osc.NeutronErr("disconnect router "+name, err)
			}
		}
		if err := routers.Delete(ctx, cl.Network, r.ID).ExtractErr(); err != nil && !osc.IsNotFound(err) {
			return osc.NeutronErr("delete router "+name, err)
		}
	}
	return nil
}

// deleteNetwork deletes the cluster's unbound ports on the network, then the network (its
// subnet goes with it). A port bound to something else blocks it, named.
func (in *Infra) deleteNetwork(ctx context.Context, cl *conn, c rke2.ClusterRef, n networks.Network) error {
	page, err := ports.List(cl.Network, ports.ListOpts{NetworkID: n.ID}).AllPages(ctx)
	if err != nil {
		return osc.NeutronErr("list ports of network "+n.Name, err)
	}
	pts, err := ports.ExtractPorts(page)
	if err != nil {
		return err
	}
	var blockers []string
	for _, p := range pts {
		switch {
		case p.Description == clusterDesc(c) && p.DeviceID == "":
			if err := ports.Delete(ctx, cl.Network, p.ID).ExtractErr(); err != nil && !osc.IsNotFound(err) {
				return osc.NeutronErr("delete port "+p.Name, err)
			}
		case strings.HasPrefix(p.DeviceOwner, "network:dhcp"):
		default:
			blockers = append(blockers, fmt.Sprintf("port %s (%s, device %s %s)", p.Name, p.ID, p.DeviceOwner, p.DeviceID))
		}
	}
	if len(blockers) > 0 {
		sort.Strings(blockers)
		return failure.Errorf("openstack: network %s is still used by %s", n.Name, strings.Join(blockers, ", "))
	}
	if err := networks.Delete(ctx, cl.Network, n.ID).ExtractErr(); err != nil && !osc.IsNotFound(err) {
		return osc.NeutronErr("delete network "+n.Name, err)
	}
	return nil
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
