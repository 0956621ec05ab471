package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	gos "github.com/gophercloud/gophercloud/v2/openstack"
	volumequotas "github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/quotasets"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	computequotas "github.com/gophercloud/gophercloud/v2/openstack/compute/v2/quotasets"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/openstack"
	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
	"github.com/waldur/site-agent/internal/testenv/osenv"
)

// osWorld is a Waldur simulator seeded with an OpenStack tenant offering, the real loopback
// OpenStack, and Keystone users for the team (created here, deleted when the test ends).
type osWorld struct {
	*env
	os       osenv.Env
	run      string
	offering waldursim.Offering
	project  waldursim.Project
	team     map[string]waldursim.User // Keystone username → Waldur user
	password string                    // of the team's Keystone users
	identity *gophercloud.ServiceClient
	compute  *gophercloud.ServiceClient
	volume   *gophercloud.ServiceClient
}

func newOSWorld(t *testing.T) *osWorld {
	t.Helper()
	osEnv := osenv.Load(t)
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	w := &osWorld{os: osEnv, run: hex.EncodeToString(b), team: map[string]waldursim.User{}, password: "pw-" + hex.EncodeToString(b) + "-team"}
	w.connect(t)
	sim := waldursim.New(waldursim.Options{Token: scenario.Token})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	w.env = &env{t: t, sim: sim, url: srv.URL, dir: t.TempDir()}
	t.Cleanup(func() {
		if !t.Failed() {
			sim.AssertNoViolations(t)
		}
	})
	w.seed(t)
	w.writeConfig(t)
	return w
}

func (w *osWorld) connect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := gos.AuthenticatedClient(ctx, w.os.AuthOptions())
	if err != nil {
		t.Fatalf("admin login: %v", err)
	}
	eo := w.os.EndpointOpts()
	if w.identity, err = gos.NewIdentityV3(p, eo); err == nil {
		if w.compute, err = gos.NewComputeV2(p, eo); err == nil {
			w.volume, err = gos.NewBlockStorageV3(p, eo)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

func (w *osWorld) seed(t *testing.T) {
	sim := w.sim
	provider := sim.AddCustomer(waldursim.Customer{Name: "Tartu Cloud", Slug: "tartu-cloud"})
	sim.AddServiceProvider(waldursim.ServiceProvider{CustomerUUID: provider.UUID})
	customer := sim.AddCustomer(waldursim.Customer{Name: "Institute of Physics", Slug: "physics"})
	w.project = sim.AddProject(waldursim.Project{Name: "Dark Matter", Slug: "dark-matter", CustomerUUID: customer.UUID})
	comps := []waldursim.Component{
		{Type: "cores", Name: "vCPU", MeasuredUnit: "cores", BillingType: "limit"},
		{Type: "ram", Name: "RAM", MeasuredUnit: "GB", BillingType: "limit"},
		{Type: "storage", Name: "Storage", MeasuredUnit: "GB", BillingType: "limit"},
	}
	w.offering = sim.AddOffering(waldursim.Offering{Name: "OpenStack tenants", CustomerUUID: provider.UUID, Components: comps,
		Plans: []waldursim.Plan{{Name: "Standard", Quotas: map[string]float64{"cores": 2, "ram": 4, "storage": 10}}}})
	for _, n := range []string{"alice", "bob"} {
		name := "sae2e-" + w.run + "-" + n
		u, err := users.Create(context.Background(), w.identity, users.CreateOpts{Name: name, DomainID: "default", Password: w.password}).Extract()
		if err != nil {
			t.Fatalf("create Keystone user %s: %v", name, err)
		}
		t.Cleanup(func() { _ = users.Delete(context.Background(), w.identity, u.ID).ExtractErr() })
		wu := sim.AddUser(waldursim.User{Username: n, FullName: n + " Example", Email: n + "@physics.example"})
		sim.AddProjectMember(w.project.UUID, wu.UUID, "PROJECT.MEMBER")
		sim.AddOfferingUser(waldursim.OfferingUser{OfferingUUID: w.offering.UUID, UserUUID: wu.UUID, Username: name})
		w.team[name] = wu
	}
	sim.SetCurrentUser(waldursim.User{Username: "site-agent", FullName: "Site Agent"},
		waldursim.Permission{RoleName: "CUSTOMER.OWNER", ScopeType: "customer", ScopeUUID: provider.UUID, ScopeName: provider.Name})
}

func (w *osWorld) writeConfig(t *testing.T) {
	w.config = writeOSConfig(t, w.dir, osConfig{
		waldurURL: w.url, offering: w.offering.UUID,
		authURL: w.os.AuthURL, username: w.os.Username, password: w.os.Password, userDomain: w.os.UserDomain,
		project: w.os.ProjectName, projectDomain: w.os.ProjectDomain, region: w.os.Region, extNet: w.os.ExternalNetwork,
		settings: fmt.Sprintf("allocation_prefix: \"e2e-\"\ncheck_backend_id_uniqueness: true\ntenant_prefix: \"sae2e-%s-\"\n", w.run),
		components: `cores: {measured_unit: cores, unit_factor: 1, accounting_type: limit, label: vCPU}
ram: {measured_unit: GB, unit_factor: 1024, accounting_type: limit, label: RAM}
storage: {measured_unit: GB, unit_factor: 1, accounting_type: limit, label: Storage, quota: gigabytes}
`,
	})
}

// osConfig is one OpenStack offering's agent configuration: the connection and what differs
// between tests (extra backend_settings lines and the components, unindented YAML).
type osConfig struct {
	waldurURL, offering                     string
	authURL, username, password, userDomain string
	project, projectDomain, region, extNet  string
	settings, components                    string
}

// writeOSConfig writes the configuration file and returns its path.
func writeOSConfig(t *testing.T, dir string, c osConfig) string {
	t.Helper()
	optional := func(key, v string) string {
		if v == "" {
			return ""
		}
		return fmt.Sprintf("%s: %q\n", key, v)
	}
	settings := fmt.Sprintf("auth_url: %q\nusername: %q\npassword: %q\n", c.authURL, c.username, c.password) +
		optional("user_domain_name", c.userDomain) + optional("project_name", c.project) +
		optional("project_domain_name", c.projectDomain) + optional("region_name", c.region) +
		optional("external_network", c.extNet) + c.settings
	cfg := fmt.Sprintf(`timezone: UTC
log_level: INFO
heartbeat_file: %s
offerings:
  - name: "OpenStack tenants"
    waldur_api_url: "%s/api/"
    waldur_api_token: "%s"
    waldur_offering_uuid: "%s"
    backend_type: openstack
    order_processing_backend: openstack
    membership_sync_backend: openstack
    reporting_backend: openstack
    backend_settings:
%s    backend_components:
%s`, filepath.Join(dir, "heartbeat"), c.waldurURL, scenario.Token, c.offering, indent(settings, 6), indent(c.components, 6))
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// indent prefixes every non-empty line with n spaces.
func indent(text string, n int) string {
	pad := strings.Repeat(" ", n)
	lines := strings.SplitAfter(text, "\n")
	var b strings.Builder
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			b.WriteString(pad + l)
		}
	}
	return b.String()
}

// quotas reads the tenant's Nova cores/ram and Cinder gigabytes.
func (w *osWorld) quotas(t *testing.T, projectID string) [3]int {
	t.Helper()
	nq, err := computequotas.Get(context.Background(), w.compute, projectID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	cq, err := volumequotas.Get(context.Background(), w.volume, projectID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	return [3]int{nq.Cores, nq.RAM, cq.Gigabytes}
}

// members lists the Keystone users holding a role on the project.
func (w *osWorld) members(t *testing.T, projectID string) []string {
	t.Helper()
	yes := true
	page, err := roles.ListAssignments(w.identity, roles.ListAssignmentsOpts{ScopeProjectID: projectID, IncludeNames: &yes}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all, err := roles.ExtractRoleAssignments(page)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range all {
		out = append(out, a.User.Name)
	}
	slices.Sort(out)
	return out
}

// createVolumeAs creates a volume in the tenant as a team member (usage the report must see).
func (w *osWorld) createVolumeAs(t *testing.T, username, projectID string, size int) string {
	t.Helper()
	p, err := gos.AuthenticatedClient(context.Background(), gophercloud.AuthOptions{IdentityEndpoint: w.os.AuthURL, Username: username,
		Password: w.password, DomainName: "Default", Scope: &gophercloud.AuthScope{ProjectID: projectID}})
	if err != nil {
		t.Fatalf("%s logs into the tenant: %v", username, err)
	}
	vc, err := gos.NewBlockStorageV3(p, w.os.EndpointOpts())
	if err != nil {
		t.Fatal(err)
	}
	v, err := volumes.Create(context.Background(), vc, volumes.CreateOpts{Size: size, Name: "e2e"}, nil).Extract()
	if err != nil {
		t.Fatalf("create volume: %v", err)
	}
	return v.ID
}

// forceDeleteVolume removes a volume as admin and waits until Cinder no longer lists it.
func (w *osWorld) forceDeleteVolume(t *testing.T, id string) {
	t.Helper()
	if err := volumes.ForceDelete(context.Background(), w.volume, id).ExtractErr(); err != nil {
		t.Fatalf("force-delete volume: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := volumes.Get(context.Background(), w.volume, id).Extract(); gophercloud.ResponseCodeIs(err, 404) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("volume %s still exists", id)
}

func (w *osWorld) projectExists(t *testing.T, id string) bool {
	t.Helper()
	_, err := projects.Get(context.Background(), w.identity, id).Extract()
	if err != nil && !gophercloud.ResponseCodeIs(err, 404) {
		t.Fatal(err)
	}
	return err == nil
}

// cleanupTenant force-deletes, through the backend package, a tenant a failed test left.
func (w *osWorld) cleanupTenant(t *testing.T, resourceUUID string, backendID *string) {
	t.Cleanup(func() {
		if *backendID == "" || !w.projectExists(t, *backendID) {
			return
		}
		t.Logf("test left project %s behind; deleting it", *backendID)
		b, _, err := openstack.New(backends.Params{Settings: backends.Settings{"auth_url": w.os.AuthURL, "username": w.os.Username,
			"password": w.os.Password, "user_domain_name": w.os.UserDomain, "project_name": w.os.ProjectName,
			"project_domain_name": w.os.ProjectDomain, "region_name": w.os.Region, "external_network": w.os.ExternalNetwork,
			"force_destroy": true}})
		if err == nil {
			err = b.(backends.Provisioner).Delete(context.Background(), backends.Resource{UUID: strings.ReplaceAll(resourceUUID, "-", ""), BackendID: *backendID})
		}
		if err != nil {
			t.Errorf("cleanup of project %s: %v", *backendID, err)
		}
	})
}
