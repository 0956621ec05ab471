package openstack

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// findProject returns the project with that name in the tenant domain, or nil.
func (c *clients) findProject(ctx context.Context, name string) (*projects.Project, error) {
	page, err := projects.List(c.identity, projects.ListOpts{Name: name, DomainID: c.domainID}).AllPages(ctx)
	if err != nil {
		return nil, classify("keystone", fmt.Errorf("find project %q: %w", name, err))
	}
	all, err := projects.ExtractProjects(page)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	return &all[0], nil
}

// getProject reads a project by id; a missing one is ErrNotFound.
func (c *clients) getProject(ctx context.Context, id string) (*projects.Project, error) {
	p, err := projects.Get(ctx, c.identity, id).Extract()
	if err != nil {
		if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return nil, fmt.Errorf("openstack project %q: %w", id, failure.ErrNotFound)
		}
		return nil, classify("keystone", fmt.Errorf("read project %s: %w", id, err))
	}
	return p, nil
}

// ensureProject finds or creates the tenant project and checks that it belongs to res.
func (c *clients) ensureProject(ctx context.Context, n names, res backends.Resource) (*projects.Project, bool, error) {
	p, err := c.findProject(ctx, n.project)
	if err != nil {
		return nil, false, err
	}
	created := false
	if p == nil {
		p, err = projects.Create(ctx, c.identity, projects.CreateOpts{
			Name: n.project, DomainID: c.domainID, Description: describe(res),
			Tags:  []string{tagManaged, ownerTag(res.UUID)},
			Extra: map[string]any{"waldur_resource_uuid": res.UUID, "waldur_project_uuid": res.ProjectUUID, "waldur_customer_uuid": res.CustomerUUID},
		}).Extract()
		switch {
		case gophercloud.ResponseCodeIs(err, http.StatusConflict):
			// created concurrently (or by a lost response of ours): look again
			if p, err = c.findProject(ctx, n.project); err == nil && p == nil {
				err = failure.Transient(fmt.Errorf("project %q conflicts but cannot be found", n.project))
			}
		case err != nil:
			return nil, false, classify("keystone", fmt.Errorf("create project %q: %w", n.project, err))
		default:
			created = true
		}
		if err != nil {
			return nil, false, err
		}
	}
	if owner, ok := tagValue(p.Tags, ownerTagPrefix); !ok || owner != res.UUID {
		if !ok {
			owner = "no Waldur resource (not created by site-agent)"
		}
		return nil, false, fmt.Errorf("openstack project %q belongs to %s: %w", n.project, owner, failure.ErrDuplicate)
	}
	return p, created, nil
}

// ownedProject reads the project of res and checks it carries res's owner tag.
func (c *clients) ownedProject(ctx context.Context, res backends.Resource) (*projects.Project, error) {
	if res.BackendID == "" {
		return nil, failure.Errorf("resource has no backend id: the tenant was never created")
	}
	p, err := c.getProject(ctx, res.BackendID)
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
