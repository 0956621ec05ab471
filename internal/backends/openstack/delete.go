package openstack

import (
	"context"
	"errors"
	"fmt"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/clients/openstack/tenant"
	"github.com/waldur/site-agent/internal/failure"
)

// Delete implements backends.Provisioner: the tenant is taken apart in dependency order —
// its network objects (tenant.NetworkTeardown: floating IPs, router interfaces and routers,
// remaining ports, subnets, networks, every security group, Neutron's "default" too: it
// outlives the project otherwise), the quota
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
		{"network objects", func(ctx context.Context, c *clients, id string) error {
			return tenant.NetworkTeardown{ProjectID: id}.Run(ctx, c.network)
		}},
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

func (b *Backend) deleteQuotas(ctx context.Context, c *clients, projectID string) error {
	for _, svc := range b.quotas.services() {
		if err := tenant.DeleteQuotas(ctx, c.services(), svc, projectID); err != nil {
			return err
		}
	}
	return nil
}
