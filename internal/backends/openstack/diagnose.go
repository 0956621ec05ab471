package openstack

import (
	"context"
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"

	"github.com/waldur/site-agent/internal/backends"
)

// Ping implements backends.Pinger: the first call authenticates and reads the catalog; later
// calls validate the token and re-authenticate when Keystone no longer accepts it.
func (b *Backend) Ping(ctx context.Context) error {
	b.connMu.Lock()
	cl := b.cl
	b.connMu.Unlock()
	if cl == nil {
		_, err := b.conn(ctx)
		return err
	}
	tok := cl.provider.Token()
	ok, err := tokens.Validate(ctx, cl.identity, tok)
	if err != nil {
		return classify("keystone", fmt.Errorf("validate token: %w", err))
	}
	if !ok { // revoked or expired: get a new one now rather than on the next real call
		if err := cl.provider.Reauthenticate(ctx, tok); err != nil {
			return classify("keystone", fmt.Errorf("re-authenticate: %w", err))
		}
	}
	return nil
}

// Probes implements backends.Diagnoser: OpenStack (Keystone first: the other checks need its
// catalog and token).
func (b *Backend) Probes() []backends.Probe {
	return []backends.Probe{{Upstream: "openstack", Run: b.diagnose}}
}

func (b *Backend) diagnose(ctx context.Context) []backends.Check {
	s := b.settings
	b.dropConn() // diagnose from scratch
	c, err := b.connect(ctx)
	if err != nil {
		return []backends.Check{{Name: "keystone authentication", OK: false, Detail: err.Error()}}
	}
	checks := []backends.Check{
		{Name: "keystone authentication", OK: true, Detail: fmt.Sprintf("%s as %s (project %s) at %s", s.UserDomainName, s.Username, s.ProjectName, s.AuthURL)},
		{Name: "catalog endpoints", OK: c.complete, Detail: fmt.Sprintf("identity %s, compute %s, volumev3 %s, network %s, image %s, load-balancer %s",
			c.identity.Endpoint, c.compute.Endpoint, c.volume.Endpoint, c.network.Endpoint, optionalEndpoint(c.image, c.imageErr), optionalEndpoint(c.loadBalancer, c.loadBalancerErr))},
	}
	checks = append(checks, b.checkAdmin(ctx, c))
	check := func(name string, fn func() (string, error)) {
		detail, err := fn()
		if err != nil {
			detail = err.Error()
		}
		checks = append(checks, backends.Check{Name: name, OK: err == nil, Detail: detail})
	}
	// lookup resolves a configured name (value) with find, keeping its id in into for later checks.
	lookup := func(name, value string, sc *gophercloud.ServiceClient,
		find func(context.Context, *gophercloud.ServiceClient, string) (string, error), into *string, note string) {
		check(name, func() (string, error) {
			id, err := find(ctx, sc, value)
			*into = id
			return fmt.Sprintf("%s (id %s%s)", value, id, note), err
		})
	}
	lookup("tenant domain", s.Domain, c.identity, findDomain, &c.domainID, "")
	lookup("user domain", s.UserDomain, c.identity, findDomain, &c.userDomainID, "")
	lookup("member role", s.MemberRole, c.identity, findRole, &c.roleID, "")
	lookup("external network", s.ExternalNetwork, c.network, findExternalNetwork, &c.extNetID, ", router:external")
	check("quota mapping", func() (string, error) { return b.describeQuotas(), nil })
	if s.CreateTenantUser {
		checks = append(checks, backends.Check{Name: "tenant credentials store", OK: b.secrets != nil,
			Detail: "tenant passwords are stored under " + strings.TrimRight(s.CredentialsPath, "/") + "/<project>"})
	}
	return checks
}

// checkAdmin proves admin rights with cheap calls only an admin may make: listing projects
// (filtered to the agent's own) and that project's role assignments.
func (b *Backend) checkAdmin(ctx context.Context, c *clients) backends.Check {
	fail := func(err error) backends.Check {
		return backends.Check{Name: "admin rights", OK: false, Detail: classify("keystone", err).Error()}
	}
	page, err := projects.List(c.identity, projects.ListOpts{Name: b.settings.ProjectName}).AllPages(ctx)
	if err != nil {
		return fail(fmt.Errorf("list projects: %w", err))
	}
	all, err := projects.ExtractProjects(page)
	if err != nil || len(all) == 0 {
		return fail(fmt.Errorf("list projects: own project %q not visible (%v)", b.settings.ProjectName, err))
	}
	if _, err := roles.ListAssignments(c.identity, roles.ListAssignmentsOpts{ScopeProjectID: all[0].ID}).AllPages(ctx); err != nil {
		return fail(fmt.Errorf("list role assignments: %w", err))
	}
	return backends.Check{Name: "admin rights", OK: true, Detail: "can list projects and role assignments"}
}

// optionalEndpoint describes a service terminate cleans up only when the catalog has it.
func optionalEndpoint(sc *gophercloud.ServiceClient, err error) string {
	if err != nil {
		return err.Error()
	}
	if sc == nil {
		return "absent (nothing of it to clean up on terminate)"
	}
	return sc.Endpoint
}

func (b *Backend) describeQuotas() string {
	parts := make([]string, 0, len(b.quotas.components))
	for _, comp := range b.quotas.components {
		q := b.quotas.byComponent[comp]
		parts = append(parts, fmt.Sprintf("%s→%s.%s", comp, q.Service, q.Name))
	}
	if len(parts) == 0 {
		return "no components mapped to quotas"
	}
	return strings.Join(parts, ", ")
}
