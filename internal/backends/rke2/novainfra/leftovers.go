package novainfra

import (
	"context"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"

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
	return tenant.Listed(ctx, "neutron", "list ports", ports.List(s.Network, o), ports.ExtractPorts,
		func(p ports.Port) (tenant.Leftover, bool) {
			return tenant.Leftover{ID: p.ID, Name: p.Name, Service: "neutron"}, keep(p)
		})
}

func deletePort(ctx context.Context, s tenant.Services, o tenant.Leftover) error {
	return ports.Delete(ctx, s.Network, o.ID).ExtractErr()
}

// fipKind: the project's floating IPs but the cluster's.
func fipKind(ours func(floatingips.FloatingIP) bool) tenant.Kind {
	return tenant.Kind{Name: "floating IP",
		List: func(ctx context.Context, s tenant.Services, projectID string) ([]tenant.Leftover, error) {
			return tenant.Listed(ctx, "neutron", "list floating IPs",
				floatingips.List(s.Network, floatingips.ListOpts{ProjectID: projectID}), floatingips.ExtractFloatingIPs,
				func(f floatingips.FloatingIP) (tenant.Leftover, bool) {
					return tenant.Leftover{ID: f.ID, Name: f.FloatingIP, Service: "neutron"}, ours == nil || !ours(f)
				})
		},
		Remove: func(ctx context.Context, s tenant.Services, o tenant.Leftover) error {
			return floatingips.Delete(ctx, s.Network, o.ID).ExtractErr()
		}}
}
