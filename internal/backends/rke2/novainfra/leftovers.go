package novainfra

import (
	"context"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"

	osc "github.com/waldur/site-agent/internal/clients/openstack"
	"github.com/waldur/site-agent/internal/clients/openstack/tenant"
)

// Kinds of objects others may make in a cluster's project, beside the tenant package's: ports
// and floating IPs.

// portKind: the project's ports but those Neutron, Nova and Octavia own (they go with their
// network, router, server or load balancer) and the cluster's own.
func portKind(ours func(ports.Port) bool) tenant.Kind {
	return tenant.Kind{Name: "port", After: []string{"server", "load balancer"},
		List: func(ctx context.Context, s tenant.Services, projectID string) ([]tenant.Leftover, error) {
			return listPorts(ctx, s, ports.ListOpts{ProjectID: projectID}, func(p ports.Port) bool {
				return !owned(p) && (ours == nil || !ours(p))
			})
		},
		Remove: deletePort}
}

// owned: a port another object owns (DHCP, router, floating IP, server, load balancer).
func owned(p ports.Port) bool {
	o := p.DeviceOwner
	return strings.HasPrefix(o, "network:") || strings.HasPrefix(o, "compute:") || o == "Octavia" || o == "neutron:LOADBALANCERV2"
}

func listPorts(ctx context.Context, s tenant.Services, o ports.ListOpts, keep func(ports.Port) bool) ([]tenant.Leftover, error) {
	page, err := ports.List(s.Network, o).AllPages(ctx)
	if err != nil {
		return nil, osc.NeutronErr("list ports", err)
	}
	all, err := ports.ExtractPorts(page)
	var out []tenant.Leftover
	for _, p := range all {
		if keep(p) {
			out = append(out, tenant.Leftover{ID: p.ID, Name: p.Name, Service: "neutron"})
		}
	}
	return out, err
}

func deletePort(ctx context.Context, s tenant.Services, o tenant.Leftover) error {
	return ports.Delete(ctx, s.Network, o.ID).ExtractErr()
}

// fipKind: the project's floating IPs but the cluster's.
func fipKind(ours func(floatingips.FloatingIP) bool) tenant.Kind {
	return tenant.Kind{Name: "floating IP",
		List: func(ctx context.Context, s tenant.Services, projectID string) ([]tenant.Leftover, error) {
			page, err := floatingips.List(s.Network, floatingips.ListOpts{ProjectID: projectID}).AllPages(ctx)
			if err != nil {
				return nil, osc.NeutronErr("list floating IPs", err)
			}
			all, err := floatingips.ExtractFloatingIPs(page)
			var out []tenant.Leftover
			for _, f := range all {
				if ours == nil || !ours(f) {
					out = append(out, tenant.Leftover{ID: f.ID, Name: f.FloatingIP, Service: "neutron"})
				}
			}
			return out, err
		},
		Remove: func(ctx context.Context, s tenant.Services, o tenant.Leftover) error {
			return floatingips.Delete(ctx, s.Network, o.ID).ExtractErr()
		}}
}
