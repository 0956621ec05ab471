package tenant

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/domains"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"

	osc "github.com/waldur/site-agent/internal/clients/openstack"
	"github.com/waldur/site-agent/internal/failure"
)

// Services are the service clients the tenant code uses. Image (Glance) and LoadBalancer
// (Octavia) may be nil: the catalog has no such service (their leftovers are not looked for),
// or it did not answer (ImageErr, LoadBalancerErr say so, see osc.Clients).
type Services struct {
	Identity, Compute, Volume, Network *gophercloud.ServiceClient
	Image, LoadBalancer                *gophercloud.ServiceClient
	ImageErr, LoadBalancerErr          error
}

// ServicesOf are the services of a connection.
func ServicesOf(c *osc.Clients) Services {
	return Services{Identity: c.Identity, Compute: c.Compute, Volume: c.Volume, Network: c.Network,
		Image: c.Image, LoadBalancer: c.LoadBalancer, ImageErr: c.ImageErr, LoadBalancerErr: c.LoadBalancerErr}
}

// FindDomain returns the id of the Keystone domain of that name.
func FindDomain(ctx context.Context, id *gophercloud.ServiceClient, name string) (string, error) {
	page, err := domains.List(id, domains.ListOpts{Name: name}).AllPages(ctx)
	if err != nil {
		return "", osc.Classify("keystone", fmt.Errorf("find domain %q: %w", name, err))
	}
	all, err := domains.ExtractDomains(page)
	if err != nil {
		return "", err
	}
	if len(all) != 1 {
		return "", failure.Errorf("openstack: Keystone domain %q not found", name)
	}
	return all[0].ID, nil
}

// FindRole returns the id of the Keystone role of that name; key is the setting that names
// it, for the error.
func FindRole(ctx context.Context, id *gophercloud.ServiceClient, name, key string) (string, error) {
	page, err := roles.List(id, roles.ListOpts{Name: name}).AllPages(ctx)
	if err != nil {
		return "", osc.Classify("keystone", fmt.Errorf("find role %q: %w", name, err))
	}
	all, err := roles.ExtractRoles(page)
	if err != nil {
		return "", err
	}
	if len(all) != 1 {
		return "", failure.Errorf("openstack: Keystone role %q (%s) not found", name, key)
	}
	return all[0].ID, nil
}

// FindProject returns the project with that name in the domain, or nil.
func FindProject(ctx context.Context, id *gophercloud.ServiceClient, domainID, name string) (*projects.Project, error) {
	page, err := projects.List(id, projects.ListOpts{Name: name, DomainID: domainID}).AllPages(ctx)
	if err != nil {
		return nil, osc.Classify("keystone", fmt.Errorf("find project %q: %w", name, err))
	}
	all, err := projects.ExtractProjects(page)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	return &all[0], nil
}

// GetProject reads a project by id; a missing one wraps failure.ErrNotFound.
func GetProject(ctx context.Context, id *gophercloud.ServiceClient, projectID string) (*projects.Project, error) {
	p, err := projects.Get(ctx, id, projectID).Extract()
	if err != nil {
		if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return nil, fmt.Errorf("openstack project %q: %w", projectID, failure.ErrNotFound)
		}
		return nil, osc.Classify("keystone", fmt.Errorf("read project %s: %w", projectID, err))
	}
	return p, nil
}

// EnsureProject finds the project named opts.Name in opts.DomainID or creates it; created
// says which. A 409 on the create (made concurrently, or by a create whose answer was lost)
// looks again, so a repeated call never makes a second project. The caller checks that a
// found project is its own (its tags or description).
func EnsureProject(ctx context.Context, id *gophercloud.ServiceClient, opts projects.CreateOpts) (*projects.Project, bool, error) {
	p, err := FindProject(ctx, id, opts.DomainID, opts.Name)
	if err != nil || p != nil {
		return p, false, err
	}
	p, err = projects.Create(ctx, id, opts).Extract()
	switch {
	case gophercloud.ResponseCodeIs(err, http.StatusConflict):
		if p, err = FindProject(ctx, id, opts.DomainID, opts.Name); err == nil && p == nil {
			err = failure.Transient(fmt.Errorf("project %q conflicts but cannot be found", opts.Name))
		}
		return p, false, err
	case err != nil:
		return nil, false, osc.Classify("keystone", fmt.Errorf("create project %q: %w", opts.Name, err))
	}
	return p, true, nil
}

// DeleteProject deletes a project; an absent one is success.
func DeleteProject(ctx context.Context, id *gophercloud.ServiceClient, projectID string) error {
	err := projects.Delete(ctx, id, projectID).ExtractErr()
	if err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		return osc.Classify("keystone", fmt.Errorf("delete project %s: %w", projectID, err))
	}
	return nil
}

// Grant gives the user the role on the project (idempotent: Keystone answers 204 again).
func Grant(ctx context.Context, id *gophercloud.ServiceClient, projectID, userID, roleID string) error {
	err := roles.Assign(ctx, id, roleID, roles.AssignOpts{UserID: userID, ProjectID: projectID}).ExtractErr()
	if err != nil {
		return osc.Classify("keystone", fmt.Errorf("grant role to user %s on project %s: %w", userID, projectID, err))
	}
	return nil
}
