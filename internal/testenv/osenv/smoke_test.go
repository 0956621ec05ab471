package osenv_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"

	"github.com/waldur/site-agent/internal/testenv/osenv"
)

// smoke walks the tenant life cycle the OpenStack backend relies on against
// the real services started by scripts/openstack/up.sh.
type smoke struct {
	t   *testing.T // the top-level test: cleanups registered here outlive stages
	ctx context.Context
	env osenv.Env
	lat *latencies

	identity, compute, volume, network *gophercloud.ServiceClient

	name                          string
	projectID, userID, memberRole string
	memberPassword                string
	extNetID                      string
	netID, subnetID, routerID     string
	sgID, ruleID, fipID           string
}

func TestSmoke(t *testing.T) {
	env := osenv.Load(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s := &smoke{t: t, ctx: ctx, env: env, lat: &latencies{}, name: "sa-smoke-" + randomHex(t, 4)}
	t.Cleanup(func() { t.Logf("per-call latency:\n%s", s.lat.table()) })
	stages := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"connect", s.connect},
		{"project and member", s.projectAndMember},
		{"compute quotas", s.computeQuotas},
		{"volume quotas", s.volumeQuotas},
		{"volume usage", s.volumeUsage},
		{"network quotas", s.networkQuotas},
		{"network, subnet, router, security group", s.createNetworking},
		{"network quota usage", s.networkUsage},
		{"teardown networking", s.teardownNetworking},
		{"teardown quotas and identity", s.teardownIdentity},
	}
	for _, st := range stages {
		if !t.Run(st.name, st.run) {
			return // later stages depend on this one
		}
	}
}

func (s *smoke) connect(t *testing.T) {
	var provider *gophercloud.ProviderClient
	s.lat.do(t, "keystone POST /v3/auth/tokens (admin)", func() (err error) {
		provider, err = openstack.AuthenticatedClient(s.ctx, s.env.AuthOptions())
		return err
	})
	eo := s.env.EndpointOpts()
	clients := []struct {
		name string
		dst  **gophercloud.ServiceClient
		new  func(*gophercloud.ProviderClient, gophercloud.EndpointOpts) (*gophercloud.ServiceClient, error)
	}{
		{"identity", &s.identity, openstack.NewIdentityV3},
		{"compute", &s.compute, openstack.NewComputeV2},
		{"block-storage", &s.volume, openstack.NewBlockStorageV3},
		{"network", &s.network, openstack.NewNetworkV2},
	}
	for _, c := range clients {
		s.lat.do(t, "service client from catalog: "+c.name, func() (err error) {
			*c.dst, err = c.new(provider, eo)
			return err
		})
		t.Logf("%s endpoint %s", c.name, (*c.dst).Endpoint)
	}
}

func (s *smoke) projectAndMember(t *testing.T) {
	s.lat.do(t, "keystone POST /v3/projects", func() error {
		p, err := projects.Create(s.ctx, s.identity, projects.CreateOpts{
			Name: s.name, DomainID: "default", Description: "site-agent smoke test"}).Extract()
		if err == nil {
			s.projectID = p.ID
		}
		return err
	})
	s.cleanup("delete project", func(ctx context.Context) error {
		return projects.Delete(ctx, s.identity, s.projectID).ExtractErr()
	})
	s.lat.do(t, "keystone GET /v3/roles?name=member", func() error {
		s.memberRole = findRole(s.ctx, t, s.identity, "member")
		return nil
	})
	s.memberPassword = randomHex(t, 16)
	s.lat.do(t, "keystone POST /v3/users", func() error {
		u, err := users.Create(s.ctx, s.identity, users.CreateOpts{Name: s.name + "-member",
			DomainID: "default", DefaultProjectID: s.projectID, Password: s.memberPassword}).Extract()
		if err == nil {
			s.userID = u.ID
		}
		return err
	})
	s.cleanup("delete user", func(ctx context.Context) error {
		return users.Delete(ctx, s.identity, s.userID).ExtractErr()
	})
	s.lat.do(t, "keystone PUT /v3/projects/{p}/users/{u}/roles/{r}", func() error {
		return roles.Assign(s.ctx, s.identity, s.memberRole,
			roles.AssignOpts{UserID: s.userID, ProjectID: s.projectID}).ExtractErr()
	})
	s.lat.do(t, "keystone GET /v3/role_assignments", func() error {
		return checkAssignment(s.ctx, s.identity, s.userID, s.projectID, s.memberRole)
	})
	s.lat.do(t, "keystone POST /v3/auth/tokens (new member, project scope)", func() error {
		_, err := openstack.AuthenticatedClient(s.ctx, gophercloud.AuthOptions{
			IdentityEndpoint: s.env.AuthURL, UserID: s.userID, Password: s.memberPassword,
			Scope: &gophercloud.AuthScope{ProjectID: s.projectID}})
		return err
	})
}

func findRole(ctx context.Context, t *testing.T, c *gophercloud.ServiceClient, name string) string {
	t.Helper()
	page, err := roles.List(c, roles.ListOpts{Name: name}).AllPages(ctx)
	if err != nil {
		t.Fatalf("list roles: %v", err)
	}
	all, err := roles.ExtractRoles(page)
	if err != nil || len(all) != 1 {
		t.Fatalf("want exactly one role %q, got %d (err %v)", name, len(all), err)
	}
	return all[0].ID
}

func checkAssignment(ctx context.Context, c *gophercloud.ServiceClient, userID, projectID, roleID string) error {
	page, err := roles.ListAssignments(c, roles.ListAssignmentsOpts{UserID: userID, ScopeProjectID: projectID}).AllPages(ctx)
	if err != nil {
		return err
	}
	got, err := roles.ExtractRoleAssignments(page)
	if err != nil {
		return err
	}
	if len(got) != 1 || got[0].Role.ID != roleID {
		return fmt.Errorf("want one assignment of role %s, got %+v", roleID, got)
	}
	return nil
}

// cleanup registers a best-effort delete that runs when the whole test ends;
// it is a safety net for failed runs (after a clean teardown it sees 404).
func (s *smoke) cleanup(what string, fn func(ctx context.Context) error) {
	s.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := fn(ctx); err != nil && !gophercloud.ResponseCodeIs(err, 404) {
			s.t.Errorf("cleanup: %s: %v", what, err)
		}
	})
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
