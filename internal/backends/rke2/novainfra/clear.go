package novainfra

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/rke2"
	osc "github.com/waldur/site-agent/internal/clients/openstack"
	"github.com/waldur/site-agent/internal/clients/openstack/tenant"
	"github.com/waldur/site-agent/internal/failure"
)

// What others made in a cluster's project or on its network, found before terminate deletes
// anything.

// forceWait bounds how long one terminate pass waits for force_destroy's deletions.
var forceWait, forcePoll = 10 * time.Second, 500 * time.Millisecond

// ClearLeftovers implements rke2.Infra. Leftovers are what site-agent did not make: with
// tenant: per_cluster everything in the cluster's project but the cluster's servers (by tag),
// the volumes attached to them and the cluster's ports and floating IPs (load balancers,
// servers, server groups, images, snapshots, backups, volumes, ports, floating IPs); with
// tenant: shared the servers, load balancers and ports others put on the cluster's network.
// Without force_destroy they are a permanent error naming each (kind, name, id); with it they
// are deleted, and what is still being deleted is a transient "in progress".
func (in *Infra) ClearLeftovers(ctx context.Context, c rke2.ClusterRef) error {
	in.forgetChain(c.UUID)
	cl, err := in.clusterConn(ctx, c, false)
	if err != nil || cl == nil {
		return err
	}
	admin, err := in.conn(ctx)
	if err != nil {
		return err
	}
	all, err := cl.servers(ctx, c)
	if err != nil {
		return err
	}
	ours := map[string]bool{}
	for _, s := range all {
		ours[s.ID] = true
	}
	ourPort := func(p ports.Port) bool { return p.Description == clusterDesc(c) || ours[p.DeviceID] }
	var kinds []tenant.Kind
	scope := cl.ProjectID
	if in.settings.OpenStack.PerCluster() {
		kinds = append(tenant.ProjectKinds(), portKind(ourPort), fipKind(func(f floatingips.FloatingIP) bool {
			return strings.HasPrefix(f.Description, clusterDesc(c)+" ")
		}))
	} else {
		nets, err := findNetworks(ctx, cl, chainName(c))
		if err != nil || len(nets) == 0 {
			return err
		}
		scope = nets[0].ID
		kinds = networkKinds(ourPort)
	}
	keep := func(kind string, o tenant.Leftover) bool {
		switch kind {
		case "server":
			return !ours[o.ID]
		case "volume":
			for _, s := range o.AttachedTo {
				if ours[s] {
					return false
				}
			}
		}
		return true
	}
	return tenant.Clear(ctx, tenant.ServicesOf(admin.Clients), scope, tenant.ClearOptions{Kinds: kinds, Keep: keep,
		Force: in.settings.OpenStack.ForceDestroy, Wait: forceWait, PollEvery: forcePoll, What: "cluster " + c.Name, Log: backends.Log(ctx, in.log),
		Refuse: func(inv tenant.Inventory) error {
			left := inv.Filter(func(_ string, o tenant.Leftover) bool { return !o.Busy })
			if left.Empty() {
				return fmt.Errorf("openstack: cluster %s: %s are being deleted: %w", c.Name, inv.Names(), failure.ErrNotReady)
			}
			return failure.Errorf("openstack: cluster %s: %s, not made by site-agent, block its deletion; "+
				"delete them first or set %sforce_destroy: true", c.Name, left.Names(), osPrefix)
		}})
}

// networkKinds find, on the cluster network (the scope is its id), the load balancers (by
// their VIP port), the servers (by their ports) and the bare ports others put there.
func networkKinds(ours func(ports.Port) bool) []tenant.Kind {
	foreign := func(p ports.Port) bool { return !strings.HasPrefix(p.DeviceOwner, "network:") && !ours(p) }
	lb := func(p ports.Port) bool {
		return p.DeviceOwner == "Octavia" || p.DeviceOwner == "neutron:LOADBALANCERV2"
	}
	return []tenant.Kind{
		{Name: "load balancer", List: func(ctx context.Context, s tenant.Services, network string) ([]tenant.Leftover, error) {
			return tenant.Listed(ctx, "neutron", "list ports", ports.List(s.Network, ports.ListOpts{NetworkID: network}), ports.ExtractPorts,
				func(p ports.Port) (tenant.Leftover, bool) { // Octavia's VIP port: device lb-<load balancer id>
					return tenant.Leftover{ID: strings.TrimPrefix(p.DeviceID, "lb-"), Name: p.Name, Service: "octavia"}, foreign(p) && lb(p)
				})
		}, Remove: func(ctx context.Context, s tenant.Services, o tenant.Leftover) error {
			if s.LoadBalancer == nil {
				return failure.Errorf("openstack: load balancer %s cannot be deleted: Octavia is not in the catalog", o.ID)
			}
			return tenant.DeleteLoadBalancer(ctx, s, o)
		}},
		{Name: "server", List: func(ctx context.Context, s tenant.Services, network string) ([]tenant.Leftover, error) {
			return networkServers(ctx, s, network, foreign)
		}, Remove: tenant.DeleteServer},
		{Name: "port", After: []string{"server", "load balancer"}, List: func(ctx context.Context, s tenant.Services, network string) ([]tenant.Leftover, error) {
			return listPorts(ctx, s, ports.ListOpts{NetworkID: network}, func(p ports.Port) bool {
				return foreign(p) && !lb(p) && !strings.HasPrefix(p.DeviceOwner, "compute:")
			})
		}, Remove: deletePort},
	}
}

// networkServers are the servers with a foreign port on the network, named as Nova has them.
func networkServers(ctx context.Context, s tenant.Services, network string, foreign func(ports.Port) bool) ([]tenant.Leftover, error) {
	page, err := ports.List(s.Network, ports.ListOpts{NetworkID: network}).AllPages(ctx)
	if err != nil {
		return nil, osc.NeutronErr("list ports", err)
	}
	all, err := ports.ExtractPorts(page)
	if err != nil {
		return nil, err
	}
	var out []tenant.Leftover
	seen := map[string]bool{}
	for _, p := range all {
		if !foreign(p) || !strings.HasPrefix(p.DeviceOwner, "compute:") || p.DeviceID == "" || seen[p.DeviceID] {
			continue
		}
		seen[p.DeviceID] = true
		var v struct {
			ID        string `json:"id"`
			Name      string `json:"name"`
			Status    string `json:"status"`
			TaskState string `json:"OS-EXT-STS:task_state"`
		}
		err := servers.Get(ctx, s.Compute, p.DeviceID).ExtractInto(&v)
		if osc.IsNotFound(err) {
			continue // gone; its port goes with it
		}
		if err != nil {
			return nil, osc.Classify("nova", fmt.Errorf("get server %s: %w", p.DeviceID, err))
		}
		out = append(out, tenant.Leftover{ID: v.ID, Name: v.Name, Service: "nova", Status: v.Status,
			Busy: v.TaskState == "deleting" || v.Status == "DELETED"})
	}
	return out, nil
}
