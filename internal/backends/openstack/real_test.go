package openstack_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	gos "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/backendtest"
	"github.com/waldur/site-agent/internal/backends/openstack"
	"github.com/waldur/site-agent/internal/testenv/osenv"
)

// realEnv is the loopback OpenStack started by scripts/openstack/up.sh, plus an admin
// gophercloud client for setup and checks that do not go through the backend.
type realEnv struct {
	env                                osenv.Env
	run                                string // random per test, in every name the test creates
	identity, network, compute, volume *gophercloud.ServiceClient
}

func loadReal(t testing.TB) *realEnv {
	t.Helper()
	env := osenv.Load(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	provider, err := gos.AuthenticatedClient(ctx, env.AuthOptions())
	if err != nil {
		t.Fatalf("admin login: %v", err)
	}
	id, err := gos.NewIdentityV3(provider, env.EndpointOpts())
	if err != nil {
		t.Fatal(err)
	}
	nc, err := gos.NewNetworkV2(provider, env.EndpointOpts())
	if err != nil {
		t.Fatal(err)
	}
	cc, err := gos.NewComputeV2(provider, env.EndpointOpts())
	if err != nil {
		t.Fatal(err)
	}
	vc, err := gos.NewBlockStorageV3(provider, env.EndpointOpts())
	if err != nil {
		t.Fatal(err)
	}
	return &realEnv{env: env, run: randHex(t, 3), identity: id, network: nc, compute: cc, volume: vc}
}

func randHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func (r *realEnv) settings(extra map[string]any) backends.Settings {
	s := backends.Settings{"auth_url": r.env.AuthURL, "username": r.env.Username, "password": r.env.Password,
		"user_domain_name": r.env.UserDomain, "project_name": r.env.ProjectName, "project_domain_name": r.env.ProjectDomain,
		"region_name": r.env.Region, "external_network": r.env.ExternalNetwork, "tenant_prefix": "sa-" + r.run + "-"}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

func (r *realEnv) backend(t testing.TB, o backendOpts) *realBackend {
	t.Helper()
	c := newCounter()
	if o.transport == nil {
		o.transport = c
	}
	return &realBackend{Backend: newBackend(t, r.settings(o.settings), o), calls: c}
}

// users creates Keystone users for membership tests and deletes them when the test ends.
func (r *realEnv) users(t testing.TB, names ...string) []string {
	t.Helper()
	var out []string
	for _, n := range names {
		name := "sa-" + r.run + "-" + n
		u, err := users.Create(context.Background(), r.identity, users.CreateOpts{Name: name, DomainID: "default"}).Extract()
		if err != nil {
			t.Fatalf("create user %s: %v", name, err)
		}
		t.Cleanup(func() { _ = users.Delete(context.Background(), r.identity, u.ID).ExtractErr() })
		out = append(out, name)
	}
	return out
}

// leftovers lists projects whose name starts with this run's prefix.
func (r *realEnv) leftovers(t testing.TB) []string {
	t.Helper()
	page, err := projects.List(r.identity, projects.ListOpts{DomainID: "default"}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all, err := projects.ExtractProjects(page)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	prefix := "sa-" + r.run + "-"
	for _, p := range all {
		if len(p.Name) >= len(prefix) && p.Name[:len(prefix)] == prefix {
			out = append(out, p.Name)
		}
	}
	return out
}

type realBackend struct {
	*openstack.Backend
	calls *counter
}

func realResource(run string) func(n int) backends.Resource {
	return func(n int) backends.Resource {
		res := resource(n)
		res.UUID = fmt.Sprintf("%s%026x", run, n)
		res.Slug = fmt.Sprintf("%s-%d", run, n)
		return res
	}
}

func TestConformanceReal(t *testing.T) {
	r := loadReal(t)
	members := r.users(t, "alice", "bob")
	start := time.Now()
	backendtest.Run(t, backendtest.Options{
		New:      func(t *testing.T) backends.Backend { return r.backend(t, backendOpts{}).Backend },
		Resource: realResource(r.run),
		Members:  members,
		Timeout:  5 * time.Minute,
	})
	t.Logf("conformance against real OpenStack took %s", time.Since(start).Round(time.Millisecond))
	if left := r.leftovers(t); len(left) > 0 {
		t.Errorf("projects left behind: %v", left)
	}
}
