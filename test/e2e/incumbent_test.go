package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// incumbentFile is a configuration as a site running the Python agent has it: booleans spelled
// the YAML 1.1 way (yes/no, on/off, in any case), which PyYAML read as booleans.
const incumbentFile = `timezone: UTC
log_level: INFO
expose_backend_error_details: yes
heartbeat_file: %s
log_shipping:
  enabled: off
offerings:
  - name: "%s"
    waldur_api_url: "%s/api/"
    waldur_api_token: "%s"
    waldur_offering_uuid: "%s"
    backend_type: inmemory
    order_processing_backend: inmemory
    membership_sync_backend: inmemory
    reporting_backend: inmemory
    verify_ssl: no
    stomp_enabled: Off
    websocket_use_tls: YES
    resource_import_enabled: no
    backend_settings:
      allocation_prefix: "phys_"
      check_backend_id_uniqueness: yes
      state_file: %s
      per_user_usage: on
      usage_fraction: 0.5
    backend_components:
      cpu: {limit: 8, measured_unit: cores, unit_factor: 1, accounting_type: limit, label: CPU}
      ram: {limit: 32, measured_unit: GB, unit_factor: 1, accounting_type: limit, label: RAM}
      storage: {measured_unit: GB, unit_factor: 1, accounting_type: usage, label: Storage}
`

// The incumbent's file, unchanged: check-config accepts it, orders run end to end, and the
// backend's boolean (per_user_usage: on) takes effect — usage is split among the members.
func TestIncumbentConfigYAML11BooleansRunsOrders(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	text := fmt.Sprintf(incumbentFile, filepath.Join(e.dir, "heartbeat"), e.world.Offering.Name, e.url, scenario.Token,
		e.world.Offering.UUID, e.state)
	writeFile(t, e.config, text)
	if r := e.run("check-config", "-c", e.config); r.code != 0 || strings.Contains(r.stdout, "warning") {
		t.Fatalf("check-config: %s", r)
	}
	o := e.world.CreateOrder("incumbent", map[string]float64{"cpu": 2, "ram": 4})
	e.once("order_process")
	if s := e.orderStates(); s[waldursim.OrderDone] != 1 {
		t.Fatalf("order not done: %v", s)
	}
	res := resourceOf(t, e, o)
	e.once("membership_sync")
	e.once("report")
	usages := e.sim.ComponentUsages(res.UUID)
	if len(usages) == 0 {
		t.Fatal("no usage reported")
	}
	for _, u := range usages {
		if len(u.UserUsages) == 0 {
			t.Errorf("%s: no per-user shares: per_user_usage: on was not read as true", u.Type)
		}
	}
}
