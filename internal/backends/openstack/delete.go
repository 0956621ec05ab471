package openstack

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"github.com/gophercloud/gophercloud/v2/pagination"
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/clients/openstack/tenant"
	"github.com/waldur/site-agent/internal/failure"
)

// Delete implements backends.Provisioner: the tenant is taken apart in dependency order —
// floating IPs, router interfaces and routers, remaining ports, subnets, networks, every
// security group (Neutron's "default" too: it outlives the project otherwise), the quota
// overrides, the tenant user and its stored credentials, then the project. Missing objects
// are skipped. A tenant holding what its users made (load balancers, servers, server groups,
// private images, snapshots, backups, volumes) is refused, naming each kind, unless
// force_destroy is set: see clearLeftovers.
func (b *Backend) Delete(ctx context.Context, res backends.Resource) error {
	c, err := b.conn(ctx)
	if err != nil {
		return err
	}
	p, err := tenant.GetProject(ctx, c.identity, res.BackendID)
	if errors.Is(err, failure.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if owner, _ := tagValue(p.Tags, ownerTagPrefix); owner != res.UUID {
		return failure.Errorf("openstack project %s (%s) is not tagged for Waldur resource %s; refusing to delete it", p.Name, p.ID, res.UUID)
	}
	if err := b.clearLeftovers(ctx, c, p); err != nil {
		return err
	}
	steps := []struct {
		what string
		fn   func(context.Context, *clients, string) error
	}{
		{"floating IPs", deleteFloatingIPs},
		{"routers", deleteRouters},
		{"ports", deletePorts},
		{"subnets", deleteSubnets},
		{"networks", deleteNetworks},
		{"security groups", deleteSecurityGroups},
		{"quotas", b.deleteQuotas},
		{"tenant user", func(ctx context.Context, c *clients, id string) error {
			return b.deleteTenantUser(ctx, c, id, names{project: p.Name, user: p.Name})
		}},
	}
	for _, st := range steps {
		if err := st.fn(ctx, c, p.ID); err != nil {
			return fmt.Errorf("delete %s of tenant %s: %w", st.what, p.Name, err)
		}
	}
	if err := tenant.DeleteProject(ctx, c.identity, p.ID); err != nil {
		return err
	}
	b.logger(ctx).Info("openstack tenant deleted", zap.String("project", p.Name), zap.String("project_id", p.ID))
	return nil
}

// clearLeftovers refuses to go on while the tenant holds objects its users made, unless
// force_destroy is set: then it asks for their deletion in dependency order (volumes after
// the servers they may be attached to and their snapshots) and looks again, for at most
// force_destroy_wait. What is still being deleted then is a transient "deletion in progress":
// the order stays executing and the next pass continues, so no pass blocks for long.
func (b *Backend) clearLeftovers(ctx context.Context, c *clients, p *projects.Project) error {
	return tenant.Clear(ctx, c.services(), p.ID, tenant.ClearOptions{
		Kinds: tenant.ProjectKinds(), Force: b.settings.ForceDestroy,
		Refuse: func(inv tenant.Inventory) error {
			return failure.Errorf("tenant %s still has %s; delete them first or set backend_settings.force_destroy", p.Name, inv)
		},
		Wait: b.settings.ForceDestroyWait, PollEvery: b.pollEvery, What: "tenant " + p.Name, Log: b.logger(ctx),
	})
}

// deleteEach lists objects with list and deletes each id, tolerating 404.
func deleteEach(ctx context.Context, pager pagination.Pager, ids func(pagination.Page) ([]string, error),
	del func(ctx context.Context, id string) error) error {
	page, err := pager.AllPages(ctx)
	if err != nil {
		return classify("neutron", err)
	}
	all, err := ids(page)
	if err != nil {
		return err
	}
	for _, id := range all {
		if err := del(ctx, id); err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return classify("neutron", err)
		}
	}
	return nil
}

func deleteFloatingIPs(ctx context.Context, c *clients, projectID string) error {
	return deleteEach(ctx, floatingips.List(c.network, floatingips.ListOpts{ProjectID: projectID}),
		func(p pagination.Page) ([]string, error) {
			all, err := floatingips.ExtractFloatingIPs(p)
			return collect(all, err, func(f floatingips.FloatingIP) string { return f.ID })
		},
		func(ctx context.Context, id string) error { return floatingips.Delete(ctx, c.network, id).ExtractErr() })
}

func deleteRouters(ctx context.Context, c *clients, projectID string) error {
	return deleteEach(ctx, routers.List(c.network, routers.ListOpts{ProjectID: projectID}),
		func(p pagination.Page) ([]string, error) {
			all, err := routers.ExtractRouters(p)
			return collect(all, err, func(r routers.Router) string { return r.ID })
		},
		func(ctx context.Context, id string) error {
			attached, err := routerPorts(ctx, c, id)
			if err != nil {
				return err
			}
			for _, port := range attached {
				if !isInterface(port) {
					continue
				}
				_, err := routers.RemoveInterface(ctx, c.network, id, routers.RemoveInterfaceOpts{PortID: port.ID}).Extract()
				if err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
					return err
				}
			}
			return routers.Delete(ctx, c.network, id).ExtractErr()
		})
}

// deletePorts removes ports left in the project (Neutron removes DHCP ports with their network).
func deletePorts(ctx context.Context, c *clients, projectID string) error {
	return deleteEach(ctx, ports.List(c.network, ports.ListOpts{ProjectID: projectID}),
		func(p pagination.Page) ([]string, error) {
			all, err := ports.ExtractPorts(p)
			var keep []ports.Port
			for _, port := range all {
				if port.DeviceOwner != "network:dhcp" {
					keep = append(keep, port)
				}
			}
			return collect(keep, err, func(p ports.Port) string { return p.ID })
		},
		func(ctx context.Context, id string) error { return ports.Delete(ctx, c.network, id).ExtractErr() })
}

func deleteSubnets(ctx context.Context, c *clients, projectID string) error {
	return deleteEach(ctx, subnets.List(c.network, subnets.ListOpts{ProjectID: projectID}),
		func(p pagination.Page) ([]string, error) {
			all, err := subnets.ExtractSubnets(p)
			return collect(all, err, func(s subnets.Subnet) string { return s.ID })
		},
		func(ctx context.Context, id string) error { return subnets.Delete(ctx, c.network, id).ExtractErr() })
}

func deleteNetworks(ctx context.Context, c *clients, projectID string) error {
	return deleteEach(ctx, networks.List(c.network, networks.ListOpts{ProjectID: projectID}),
		func(p pagination.Page) ([]string, error) {
			all, err := networks.ExtractNetworks(p)
			return collect(all, err, func(n networks.Network) string { return n.ID })
		},
		func(ctx context.Context, id string) error { return networks.Delete(ctx, c.network, id).ExtractErr() })
}

func deleteSecurityGroups(ctx context.Context, c *clients, projectID string) error {
	return deleteEach(ctx, groups.List(c.network, groups.ListOpts{ProjectID: projectID}),
		func(p pagination.Page) ([]string, error) {
			all, err := groups.ExtractGroups(p)
			return collect(all, err, func(g groups.SecGroup) string { return g.ID })
		},
		func(ctx context.Context, id string) error { return groups.Delete(ctx, c.network, id).ExtractErr() })
}

func (b *Backend) deleteQuotas(ctx context.Context, c *clients, projectID string) error {
	for _, svc := range b.quotas.services() {
		if err := tenant.DeleteQuotas(ctx, c.services(), svc, projectID); err != nil {
			return err
		}
	}
	return nil
}

func collect[T any](all []T, err error, id func(T) string) ([]string, error) {
	if err != nil {
		return nil, err
	}
	out := make([]string, len(all))
	for i, x := range all {
		out[i] = id(x)
	}
	return out, nil
}
