package scenario

import (
	"fmt"
	"strings"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// AddOffering adds another offering of the world's provider with the same components and plan,
// and gives the world's users accounts in it.
func (w *World) AddOffering(name string) waldursim.Offering {
	off := w.Sim.AddOffering(waldursim.Offering{Name: name, CustomerUUID: w.Provider.UUID, Components: Components,
		Plans: []waldursim.Plan{{Name: w.Plan.Name, Quotas: w.Plan.Quotas}}})
	for _, u := range w.Users {
		w.Sim.AddOfferingUser(waldursim.OfferingUser{OfferingUUID: off.UUID, UserUUID: u.UUID, Username: "phys_" + u.Username})
	}
	return off
}

// CreateOrderIn adds a pending Create order in another offering of the world.
func (w *World) CreateOrderIn(off waldursim.Offering, name string, limits map[string]float64) waldursim.Order {
	return w.Sim.AddOrder(waldursim.Order{Type: waldursim.OrderCreate, OfferingUUID: off.UUID,
		ProjectUUID: w.Project.UUID, PlanUUID: off.Plans[0].UUID, Limits: limits, Attributes: map[string]any{"name": name}})
}

// ConfigAll returns an agent configuration with one in-memory offering block per offering;
// settings(i) is appended to the i-th offering's backend_settings.
func (w *World) ConfigAll(apiURL string, offs []waldursim.Offering, settings func(i int) []string) string {
	var b strings.Builder
	b.WriteString("timezone: UTC\nlog_level: INFO\nofferings:\n")
	for i, off := range offs {
		extra := ""
		if settings != nil {
			for _, s := range settings(i) {
				extra += "      " + s + "\n"
			}
		}
		fmt.Fprintf(&b, offeringBlock, off.Name, strings.TrimRight(apiURL, "/"), Token, off.UUID, extra)
	}
	return b.String()
}

const offeringBlock = `  - name: "%s"
    waldur_api_url: "%s/api/"
    waldur_api_token: "%s"
    waldur_offering_uuid: "%s"
    backend_type: inmemory
    order_processing_backend: inmemory
    membership_sync_backend: inmemory
    reporting_backend: inmemory
    backend_settings:
      allocation_prefix: "phys_"
      check_backend_id_uniqueness: true
%s    backend_components:
      cpu: {limit: 8, measured_unit: cores, unit_factor: 1, accounting_type: limit, label: CPU}
      ram: {limit: 32, measured_unit: GB, unit_factor: 1, accounting_type: limit, label: RAM}
      storage: {measured_unit: GB, unit_factor: 1, accounting_type: usage, label: Storage}
`
