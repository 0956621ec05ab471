package openstack

import (
	"context"
	"fmt"
	"sort"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
)

// Members implements backends.MembershipManager: the users of user_domain holding member_role
// directly on the project (the tenant user is not a team member and is never listed).
func (b *Backend) Members(ctx context.Context, res backends.Resource) ([]string, error) {
	c, err := b.conn(ctx)
	if err != nil {
		return nil, err
	}
	yes := true
	page, err := roles.ListAssignments(c.identity, roles.ListAssignmentsOpts{
		ScopeProjectID: res.BackendID, RoleID: c.roleID, IncludeNames: &yes}).AllPages(ctx)
	if err != nil {
		return nil, classify("keystone", fmt.Errorf("list role assignments of project %s: %w", res.BackendID, err))
	}
	all, err := roles.ExtractRoleAssignments(page)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range all {
		if a.User.ID == "" || a.User.Domain.ID != c.userDomainID {
			continue // group assignments, users of other domains
		}
		if b.settings.CreateTenantUser && a.User.Name == a.Scope.Project.Name && a.User.Domain.ID == c.domainID {
			continue // the tenant user is named after its project
		}
		out = append(out, a.User.Name)
	}
	sort.Strings(out)
	return out, nil
}

// AddMembers implements backends.MembershipManager. Users are looked up by name in
// user_domain and never created: a missing user is logged and skipped (membership sync tries
// again next pass).
func (b *Backend) AddMembers(ctx context.Context, res backends.Resource, members []backends.Member) error {
	c, err := b.conn(ctx)
	if err != nil {
		return err
	}
	return b.addMembers(ctx, c, res.BackendID, members)
}

func (b *Backend) addMembers(ctx context.Context, c *clients, projectID string, members []backends.Member) error {
	for _, m := range members {
		u, err := c.findUser(ctx, m.Username, c.userDomainID)
		if err != nil {
			return err
		}
		if u == nil {
			b.logger(ctx).Warn("keystone user not found; not added to the tenant", zap.String("username", m.Username),
				zap.String("user_domain", b.settings.UserDomain), zap.String("project_id", projectID))
			continue
		}
		if err := c.assign(ctx, u.ID, projectID); err != nil {
			return err
		}
	}
	return nil
}

// RemoveMembers implements backends.MembershipManager: the role assignment goes, the user
// stays.
func (b *Backend) RemoveMembers(ctx context.Context, res backends.Resource, usernames []string) error {
	c, err := b.conn(ctx)
	if err != nil {
		return err
	}
	for _, name := range usernames {
		u, err := c.findUser(ctx, name, c.userDomainID)
		if err != nil {
			return err
		}
		if u == nil || (b.settings.CreateTenantUser && u.DefaultProjectID == res.BackendID && u.DomainID == c.domainID) {
			continue // gone already, or the tenant user
		}
		if err := c.unassign(ctx, u.ID, res.BackendID); err != nil {
			return err
		}
	}
	return nil
}
