package openstack

import (
	"context"
	"fmt"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/clients/openstack/tenant"
	"github.com/waldur/site-agent/internal/failure"
)

// ensureProject finds or creates the tenant project and checks that it belongs to res.
func (c *clients) ensureProject(ctx context.Context, n names, res backends.Resource) (*projects.Project, bool, error) {
	p, created, err := tenant.EnsureProject(ctx, c.identity, projects.CreateOpts{
		Name: n.project, DomainID: c.domainID, Description: describe(res),
		Tags:  []string{tagManaged, ownerTag(res.UUID)},
		Extra: map[string]any{"waldur_resource_uuid": res.UUID, "waldur_project_uuid": res.ProjectUUID, "waldur_customer_uuid": res.CustomerUUID},
	})
	if err != nil {
		return nil, false, err
	}
	if owner, ok := tagValue(p.Tags, ownerTagPrefix); !ok || owner != res.UUID {
		if !ok {
			owner = "no Waldur resource (not created by site-agent)"
		}
		return nil, false, fmt.Errorf("openstack project %q belongs to %s: %w", n.project, owner, failure.ErrDuplicate)
	}
	return p, created, nil
}

// ownedTenant connects and reads res's project through ownedProject.
func (b *Backend) ownedTenant(ctx context.Context, res backends.Resource) (*clients, *projects.Project, error) {
	c, err := b.conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	p, err := c.ownedProject(ctx, res)
	return c, p, err
}

// ownedProject reads the project of res and checks it carries res's owner tag.
func (c *clients) ownedProject(ctx context.Context, res backends.Resource) (*projects.Project, error) {
	if res.BackendID == "" {
		return nil, failure.Errorf("resource has no backend id: the tenant was never created")
	}
	p, err := tenant.GetProject(ctx, c.identity, res.BackendID)
	if err != nil {
		return nil, err
	}
	if owner, _ := tagValue(p.Tags, ownerTagPrefix); owner != res.UUID {
		return nil, failure.Errorf("openstack project %s (%s) is not tagged for Waldur resource %s; refusing to manage it", p.Name, p.ID, res.UUID)
	}
	return p, nil
}

// setTags replaces the project's tags.
func (c *clients) setTags(ctx context.Context, p *projects.Project, tags []string) error {
	_, err := projects.Update(ctx, c.identity, p.ID, projects.UpdateOpts{Tags: &tags}).Extract()
	if err != nil {
		return classify("keystone", fmt.Errorf("update tags of project %s: %w", p.ID, err))
	}
	p.Tags = tags
	return nil
}
