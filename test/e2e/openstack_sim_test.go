package e2e

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/waldur/site-agent/internal/sim/openstacksim"
	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// osSimWorld is the Waldur simulator with an OpenStack tenant offering whose storage is sold in
// MB (unit_factor 1/1024, as Waldur's own plugin does), and the OpenStack simulator.
type osSimWorld struct {
	*env
	os       *openstacksim.Server
	offering waldursim.Offering
	project  waldursim.Project
}

func newOSSimWorld(t *testing.T) *osSimWorld {
	t.Helper()
	return newOSSimWorldWrapped(t, nil)
}

// newOSSimWorldWrapped is newOSSimWorld with the OpenStack simulator's handler wrapped (a
// hostile or broken cloud in front of it); nil wraps nothing.
func newOSSimWorldWrapped(t *testing.T, wrap func(http.Handler) http.Handler) *osSimWorld {
	t.Helper()
	osim := openstacksim.New(openstacksim.Options{})
	var handler http.Handler = osim
	if wrap != nil {
		handler = wrap(osim)
	}
	osrv := httptest.NewServer(handler)
	t.Cleanup(osrv.Close)
	sim := waldursim.New(waldursim.Options{Token: scenario.Token})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	w := &osSimWorld{env: &env{t: t, sim: sim, url: srv.URL, dir: t.TempDir()}, os: osim}
	t.Cleanup(func() {
		if !t.Failed() {
			sim.AssertNoViolations(t)
		}
	})
	provider := sim.AddCustomer(waldursim.Customer{Name: "Tartu Cloud", Slug: "tartu-cloud"})
	sim.AddServiceProvider(waldursim.ServiceProvider{CustomerUUID: provider.UUID})
	customer := sim.AddCustomer(waldursim.Customer{Name: "Institute of Physics", Slug: "physics"})
	w.project = sim.AddProject(waldursim.Project{Name: "Dark Matter", Slug: "dark-matter", CustomerUUID: customer.UUID})
	comps := []waldursim.Component{
		{Type: "cores", Name: "vCPU", MeasuredUnit: "cores", BillingType: "limit"},
		{Type: "storage", Name: "Storage", MeasuredUnit: "MB", BillingType: "limit"},
	}
	w.offering = sim.AddOffering(waldursim.Offering{Name: "OpenStack tenants", CustomerUUID: provider.UUID, Components: comps,
		Plans: []waldursim.Plan{{Name: "Standard", Quotas: map[string]float64{"cores": 2, "storage": 10240}}}})
	sim.SetCurrentUser(waldursim.User{Username: "site-agent", FullName: "Site Agent"},
		waldursim.Permission{RoleName: "CUSTOMER.OWNER", ScopeType: "customer", ScopeUUID: provider.UUID, ScopeName: provider.Name})
	o := osim.Options()
	w.config = writeOSConfig(t, w.dir, osConfig{
		waldurURL: w.url, offering: w.offering.UUID,
		authURL: openstacksim.AuthURL(osrv.URL), username: o.AdminUser, password: o.AdminPassword,
		project: o.AdminProject, region: o.Region, extNet: o.ExternalNetwork,
		settings: "tenant_prefix: \"sim-\"\nretries: 1\n",
		components: `cores: {measured_unit: cores, unit_factor: 1, accounting_type: limit, label: vCPU}
storage: {measured_unit: MB, unit_factor: 0.0009765625, accounting_type: limit, label: Storage, quota: gigabytes}
`,
	})
	return w
}

// create orders a tenant and runs order processing once; it returns the created resource.
func (w *osSimWorld) create(t *testing.T, limits map[string]float64) waldursim.Resource {
	t.Helper()
	order := w.sim.AddOrder(waldursim.Order{Type: waldursim.OrderCreate, OfferingUUID: w.offering.UUID, ProjectUUID: w.project.UUID,
		PlanUUID: w.offering.Plans[0].UUID, Limits: limits, Attributes: map[string]any{"name": "Halo sims"}})
	w.once("order_process")
	if got, _ := w.sim.Order(order.UUID); got.State != waldursim.OrderDone {
		t.Fatalf("create order: %s (%s)", got.State, got.ErrorMessage)
	}
	return resourceOf(t, w.env, order)
}

// Waldur's limits are the customer's order. The tenant gets whole GB (1500 MB → 2 GB) and an
// administrator may lift a quota to unlimited, but neither rewrites the resource's limits in
// Waldur (what limit-billed customers pay): OpenStack's values are backend metadata.
func TestOpenStackNeverRewritesWaldurLimits(t *testing.T) {
	w := newOSSimWorld(t)
	ordered := map[string]float64{"cores": 2, "storage": 1500}
	res := w.create(t, ordered)
	if q := w.os.Quotas("cinder", res.BackendID); q["gigabytes"] != 2 {
		t.Fatalf("cinder gigabytes = %d, want 2 (1500 MB rounded up)", q["gigabytes"])
	}
	// (the simulator, like Waldur for updates, puts the order's limits on the resource when the
	// order completes, which would hide a rewrite: the agent must not send one at all)
	if n := w.sim.Calls()["marketplace_provider_resources_set_limits"]; n != 0 {
		t.Fatalf("create sent set_limits %d time(s); Waldur's limits are the order's", n)
	}
	w.os.SetQuota("nova", res.BackendID, "cores", -1) // an administrator lifts the limit
	w.once("membership_sync")
	got, _ := w.sim.Resource(res.UUID)
	if n := w.sim.Calls()["marketplace_provider_resources_set_limits"]; n != 0 || !cmp.Equal(got.Limits, ordered) {
		t.Fatalf("Waldur limits after membership sync = %v, want the order's %v", got.Limits, ordered)
	}
	want := map[string]any{"cores": "unlimited", "gigabytes": float64(2)}
	if diff := cmp.Diff(want, got.BackendMetadata["quotas"]); diff != "" {
		t.Errorf("backend metadata quotas (-want +got):\n%s\nall metadata: %v", diff, got.BackendMetadata)
	}
}
