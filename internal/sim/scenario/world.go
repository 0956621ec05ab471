package scenario

import (
	"fmt"
	"strings"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// Token is the static token the seeded Waldur accepts.
const Token = "demo-token-0123456789abcdef"

// World is a seeded simulator.
type World struct {
	Sim      *waldursim.Server
	Provider waldursim.Customer
	Customer waldursim.Customer
	Project  waldursim.Project
	Offering waldursim.Offering
	Plan     waldursim.Plan
	Users    []waldursim.User
}

// Options shape the world.
type Options struct {
	Users int // team members with offering accounts (default 3)
}

// Components are the offering's components (Waldur side).
var Components = []waldursim.Component{
	{Type: "cpu", Name: "CPU", MeasuredUnit: "cores", BillingType: "limit"},
	{Type: "ram", Name: "RAM", MeasuredUnit: "GB", BillingType: "limit"},
	{Type: "storage", Name: "Storage", MeasuredUnit: "GB", BillingType: "usage"},
}

// New seeds sim and returns the world.
func New(sim *waldursim.Server, o Options) *World {
	if o.Users == 0 {
		o.Users = 3
	}
	w := &World{Sim: sim}
	w.Provider = sim.AddCustomer(waldursim.Customer{Name: "Tartu HPC Centre", Slug: "tartu-hpc"})
	sim.AddServiceProvider(waldursim.ServiceProvider{CustomerUUID: w.Provider.UUID})
	w.Customer = sim.AddCustomer(waldursim.Customer{Name: "Institute of Physics", Slug: "physics"})
	w.Project = sim.AddProject(waldursim.Project{Name: "Dark Matter", Slug: "dark-matter", CustomerUUID: w.Customer.UUID,
		Description: "Simulations of galactic halos"})
	w.Plan = waldursim.Plan{Name: "Standard", Quotas: map[string]float64{"cpu": 4, "ram": 16}}
	w.Offering = sim.AddOffering(waldursim.Offering{Name: "Cloud Compute", CustomerUUID: w.Provider.UUID,
		Components: Components, Plans: []waldursim.Plan{w.Plan}})
	w.Plan = w.Offering.Plans[0]
	names := []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"}
	for i := 0; i < o.Users; i++ {
		name := fmt.Sprintf("user%d", i)
		if i < len(names) {
			name = names[i]
		}
		u := sim.AddUser(waldursim.User{Username: name, FullName: strings.ToUpper(name[:1]) + name[1:] + " Example",
			Email: name + "@physics.example"})
		w.Users = append(w.Users, u)
		sim.AddProjectMember(w.Project.UUID, u.UUID, "PROJECT.MEMBER")
		sim.AddOfferingUser(waldursim.OfferingUser{OfferingUUID: w.Offering.UUID, UserUUID: u.UUID, Username: "phys_" + name})
	}
	sim.SetCurrentUser(waldursim.User{Username: "site-agent", FullName: "Site Agent"},
		waldursim.Permission{RoleName: "CUSTOMER.OWNER", ScopeType: "customer", ScopeUUID: w.Provider.UUID, ScopeName: w.Provider.Name})
	return w
}

// CreateOrder adds a pending Create order for a new resource.
func (w *World) CreateOrder(name string, limits map[string]float64) waldursim.Order {
	return w.Sim.AddOrder(waldursim.Order{Type: waldursim.OrderCreate, OfferingUUID: w.Offering.UUID,
		ProjectUUID: w.Project.UUID, PlanUUID: w.Plan.UUID, Limits: limits, Attributes: map[string]any{"name": name}})
}

// UpdateOrder adds a pending Update order with new limits.
func (w *World) UpdateOrder(resourceUUID string, limits map[string]float64) waldursim.Order {
	return w.Sim.AddOrder(waldursim.Order{Type: waldursim.OrderUpdate, ResourceUUID: resourceUUID, Limits: limits})
}

// TerminateOrder adds a pending Terminate order.
func (w *World) TerminateOrder(resourceUUID string) waldursim.Order {
	return w.Sim.AddOrder(waldursim.Order{Type: waldursim.OrderTerminate, ResourceUUID: resourceUUID})
}

// Config returns an agent configuration (the incumbent's format) for the world, served at
// apiURL, using the in-memory backend; extra is appended to backend_settings.
func (w *World) Config(apiURL string, extra ...string) string {
	settings := "      allocation_prefix: \"phys_\"\n      check_backend_id_uniqueness: true\n"
	for _, e := range extra {
		settings += "      " + e + "\n"
	}
	return fmt.Sprintf(`timezone: UTC
log_level: INFO
offerings:
  - name: "%s"
    waldur_api_url: "%s/api/"
    waldur_api_token: "%s"
    waldur_offering_uuid: "%s"
    backend_type: inmemory
    order_processing_backend: inmemory
    membership_sync_backend: inmemory
    reporting_backend: inmemory
    backend_settings:
%s    backend_components:
      cpu: {limit: 8, measured_unit: cores, unit_factor: 1, accounting_type: limit, label: CPU}
      ram: {limit: 32, measured_unit: GB, unit_factor: 1, accounting_type: limit, label: RAM}
      storage: {measured_unit: GB, unit_factor: 1, accounting_type: usage, label: Storage}
`, w.Offering.Name, strings.TrimRight(apiURL, "/"), Token, w.Offering.UUID, settings)
}
