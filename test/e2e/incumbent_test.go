package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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

// incumbentLinks makes the packages' links to the binary (scripts/release/incumbent-names) in a
// directory of the test's and returns the path of each name.
func incumbentLinks(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("../../scripts/release/incumbent-names")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	links := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		name := strings.TrimSpace(strings.SplitN(line, "#", 2)[0])
		if name == "" {
			continue
		}
		links[name] = filepath.Join(dir, name)
		if err := os.Symlink(binary, links[name]); err != nil {
			t.Fatal(err)
		}
	}
	return links
}

// runAs runs the binary through one of its links.
func (e *env) runAs(path string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), "SITE_AGENT_CYCLE_TIMEOUT=50s")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("running %s %v: %v", path, args, err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// Called by the incumbent's command names, with the incumbent's flags, the binary does their
// jobs: the agent, diagnostics, the health check, components, one membership pass for each sync
// script, and the one it has no counterpart for says why.
func TestIncumbentNamesDoTheirJobs(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	ln := incumbentLinks(t)
	o := e.world.CreateOrder("by-old-name", map[string]float64{"cpu": 2})
	if r := e.runAs(ln["waldur_site_agent"], "-m", "order_process", "-c", e.config, "--once"); r.code != 0 {
		t.Fatalf("waldur_site_agent: %s", r)
	}
	res := resourceOf(t, e, o)
	if r := e.runAs(ln["waldur_site_diagnostics"], "-m", "order_process", "-c", e.config); r.code != 0 || !strings.Contains(r.stdout, "all checks passed") {
		t.Fatalf("waldur_site_diagnostics: %s", r)
	}
	if r := e.runAs(ln["waldur_site_healthz"], "--config-file", e.config, "--max-age", "300"); r.code != 0 {
		t.Fatalf("waldur_site_healthz: %s", r)
	}
	if r := e.runAs(ln["waldur_site_healthz"], "--liveness-only", "--max-age", "0"); r.code != 1 {
		t.Fatalf("waldur_site_healthz with a heartbeat older than --max-age: %s", r)
	}
	if r := e.runAs(ln["waldur_site_load_components"], "-c", e.config); r.code != 0 || !strings.Contains(r.stdout, "component cpu updated") {
		t.Fatalf("waldur_site_load_components: %s", r)
	}
	for _, name := range []string{"waldur_sync_offering_users", "waldur_sync_resource_limits"} {
		if err := addByHand(e.backend(), res.BackendID, "mallory"); err != nil {
			t.Fatal(err)
		}
		if r := e.runAs(ln[name], "-m", "membership_sync", "-c", e.config); r.code != 0 {
			t.Fatalf("%s: %s", name, r)
		}
		for _, obj := range e.objects() {
			if slices.Contains(obj.Members, "mallory") {
				t.Fatalf("%s did not run a membership pass: members %v", name, obj.Members)
			}
		}
	}
	r := e.runAs(ln["waldur_site_test_order"], "-c", e.config, "--template", "create/basic.json")
	if r.code != 2 || !strings.Contains(r.stderr, "not provided by site-agent") {
		t.Fatalf("waldur_site_test_order: %s", r)
	}
	for name, path := range ln {
		if r := e.runAs(path, "--help"); r.code != 0 || !strings.Contains(r.stdout, name) {
			t.Errorf("%s --help: %s", name, r)
		}
	}
}

// waldur_site_load_historical_usage, with the incumbent's flags: the months of the range are
// loaded with the staff user's token (the configuration's own token is not even valid), per-user
// shares included unless --skip-user-usage; a token of no staff user is refused.
func TestIncumbentHistoricalUsageLoadsTheMonths(t *testing.T) {
	e := newEnv(t, waldursim.Options{Staff: true}, "usage_fraction: 0.5", "per_user_usage: true", "past_periods: true")
	ln := incumbentLinks(t)
	o := e.world.CreateOrder("history", map[string]float64{"cpu": 4, "ram": 8})
	e.once("order_process")
	e.once("membership_sync")
	res := resourceOf(t, e, o)
	writeFile(t, e.config, strings.Replace(readFile(t, e.config), scenario.Token, "agent-token-not-staff-0000", 1))
	now := time.Now().UTC()
	first := time.Date(now.Year(), now.Month()-3, 10, 0, 0, 0, 0, time.UTC)
	last := time.Date(now.Year(), now.Month()-1, 20, 0, 0, 0, 0, time.UTC)
	r := e.runAs(ln["waldur_site_load_historical_usage"], "--config", e.config, "--offering-uuid", e.world.Offering.UUID,
		"--user-token", scenario.Token, "--start-date", first.Format(time.DateOnly), "--end-date", last.Format(time.DateOnly))
	if r.code != 0 || !strings.Contains(r.stdout, "3 month(s) from "+first.Format("2006-01")+" to "+last.Format("2006-01")+" loaded") {
		t.Fatalf("historical usage: %s", r)
	}
	if strings.Contains(r.stdout+r.stderr, scenario.Token) {
		t.Fatal("the user token is printed")
	}
	months := map[string]int{}
	for _, u := range e.sim.ComponentUsages(res.UUID) {
		months[u.BillingPeriod]++
		if len(u.UserUsages) == 0 {
			t.Errorf("%s %s: no per-user shares", u.BillingPeriod, u.Type)
		}
	}
	for m := first; !m.After(last); m = m.AddDate(0, 1, 0) {
		if p := time.Date(m.Year(), m.Month(), 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly); months[p] != 2 {
			t.Errorf("%s: %d component usages, want cpu and ram (%v)", p, months[p], months)
		}
	}
	if len(months) != 3 {
		t.Errorf("usage for %v, want the 3 months of the range only", months)
	}

	ns := newEnv(t, waldursim.Options{}, "usage_fraction: 0.5", "past_periods: true")
	ns.world.CreateOrder("history", map[string]float64{"cpu": 4})
	ns.once("order_process")
	r = ns.runAs(ln["waldur_site_load_historical_usage"], "-c", ns.config, "-o", ns.world.Offering.UUID, "-t", scenario.Token,
		"-s", first.Format(time.DateOnly), "-e", last.Format(time.DateOnly))
	if r.code != 1 || !strings.Contains(r.stderr, "is not staff") {
		t.Fatalf("a token of no staff user: %s", r)
	}
}
