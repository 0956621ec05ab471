package e2e

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/waldur/site-agent/internal/backends/inmemory"
	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// allEnv is a Waldur with three offerings of the in-memory backend (one state file each), the
// same team in all of them, and Create orders waiting in each.
type allEnv struct {
	*env
	offerings []waldursim.Offering
	states    []string
}

const ordersPerOffering = 3

func newAllEnv(t *testing.T) *allEnv {
	t.Helper()
	e := newEnv(t, waldursim.Options{})
	a := &allEnv{env: e, offerings: []waldursim.Offering{e.world.Offering,
		e.world.AddOffering("HPC Storage"), e.world.AddOffering("GPU Pool")}}
	for i, off := range a.offerings {
		a.states = append(a.states, filepath.Join(e.dir, fmt.Sprintf("backend-%d.json", i)))
		for j := 0; j < ordersPerOffering; j++ {
			e.world.CreateOrderIn(off, fmt.Sprintf("o%d-r%d", i, j), map[string]float64{"cpu": float64(j + 1), "ram": 4})
		}
	}
	text := "heartbeat_file: " + filepath.Join(e.dir, "heartbeat") + "\n" +
		e.world.ConfigAll(e.url, a.offerings, func(i int) []string {
			return []string{"state_file: " + a.states[i], "usage_fraction: 0.5", "per_user_usage: true"}
		})
	if err := os.WriteFile(e.config, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return a
}

// outcome is everything the agent changed, by names (UUIDs differ between simulators).
func (a *allEnv) outcome(t *testing.T) []string {
	t.Helper()
	names := map[string]string{}
	for _, off := range a.offerings {
		names[off.UUID] = off.Name
	}
	var out []string
	for _, o := range a.sim.Orders() {
		out = append(out, fmt.Sprintf("order %s/%s %s %s", names[o.OfferingUUID], o.ResourceName, o.Type, o.State))
	}
	for _, r := range a.sim.Resources() {
		out = append(out, fmt.Sprintf("resource %s/%s %s backend_id=%s limits=%v", names[r.OfferingUUID], r.Name, r.State, r.BackendID, r.Limits))
		for _, u := range a.sim.ComponentUsages(r.UUID) {
			var shares []string
			for _, s := range u.UserUsages {
				shares = append(shares, fmt.Sprintf("%s=%v", s.Username, s.Usage))
			}
			sort.Strings(shares)
			out = append(out, fmt.Sprintf("usage %s/%s %s %s %v %v", names[r.OfferingUUID], r.Name, u.BillingPeriod, u.Type, u.Amount, shares))
		}
	}
	for i, path := range a.states {
		objs, err := inmemory.NewBackend(inmemory.Settings{StateFile: path}, nil, nil).Objects()
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			out = append(out, fmt.Sprintf("object %d %s limits=%v members=%v", i, o.ID, o.Limits, o.Members))
		}
	}
	for _, id := range a.sim.Identities() {
		var svcs []string
		for _, s := range id.Services {
			svcs = append(svcs, fmt.Sprintf("%s%v", s.Name, s.Processors))
		}
		sort.Strings(svcs)
		out = append(out, fmt.Sprintf("identity %s services=%v", names[id.OfferingUUID], svcs))
	}
	sort.Strings(out)
	return out
}

// TestAllModesMatchSeparateProcesses runs one pass of every mode for three offerings as three
// processes (the incumbent's deployment) and as one `-m all` process, on identical worlds: the
// outcome must be the same and the single process must need fewer Waldur requests.
func TestAllModesMatchSeparateProcesses(t *testing.T) {
	separate := newAllEnv(t)
	for _, mode := range []string{"order_process", "membership_sync", "report"} {
		separate.once(mode)
	}
	together := newAllEnv(t)
	r := together.once("all")
	for _, task := range []string{"order_process", "membership_sync", "report"} {
		if !strings.Contains(r.stdout, `"task":"`+task+`"`) {
			t.Fatalf("-m all did not run %s:\n%s", task, r)
		}
	}
	want, got := separate.outcome(t), together.outcome(t)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("-m all outcome differs from separate processes (-separate +all):\n%s", diff)
	}
	if n := strings.Count(strings.Join(got, "\n"), "order "); n != 3*ordersPerOffering || strings.Contains(strings.Join(got, "\n"), "erred") {
		t.Fatalf("unexpected outcome:\n%s", strings.Join(got, "\n"))
	}
	sepCalls, allCalls := separate.sim.TotalCalls(), together.sim.TotalCalls()
	t.Logf("Waldur requests for one pass of three modes over three offerings: separate processes %d, -m all %d", sepCalls, allCalls)
	if allCalls >= sepCalls {
		t.Fatalf("-m all made %d Waldur requests, separate processes %d: sharing saved nothing", allCalls, sepCalls)
	}
	identityCalls := func(e *allEnv) int {
		c := e.sim.Calls()
		return c["marketplace_site_agent_identities_list"] + c["marketplace_site_agent_identities_create"] + c["marketplace_site_agent_identities_update"]
	}
	if got := identityCalls(together); got != 2*len(together.offerings) {
		t.Errorf("-m all looked up or wrote identities %d times, want %d (one lookup and one write per offering)", got, 2*len(together.offerings))
	}
}

// TestAllModesRunsAndStops runs `-m all` as a daemon: orders placed while it runs are done,
// usage is reported, members are synced, and SIGTERM stops it cleanly.
func TestAllModesRunsAndStops(t *testing.T) {
	a := newAllEnv(t)
	p := a.start("-m", "all", "-c", a.config, "--period", "300ms", "--listen", "127.0.0.1:0")
	waitFor(t, 20*time.Second, "the first orders", func() bool { return a.orderStates()[waldursim.OrderDone] == 3*ordersPerOffering })
	late := a.world.CreateOrderIn(a.offerings[2], "late", map[string]float64{"cpu": 1, "ram": 1})
	waitFor(t, 20*time.Second, "the order placed while running", func() bool {
		o, _ := a.sim.Order(late.UUID)
		return o.State == waldursim.OrderDone
	})
	waitFor(t, 20*time.Second, "usage of every resource", func() bool {
		for _, r := range a.sim.Resources() {
			if len(a.sim.ComponentUsages(r.UUID)) == 0 {
				return false
			}
		}
		return true
	})
	ids := a.sim.Identities()
	if len(ids) != len(a.offerings) {
		t.Fatalf("%d identities, want one per offering: %+v", len(ids), ids)
	}
	for _, id := range ids {
		if len(id.Services) != 3 {
			t.Errorf("identity %s has services %+v, want order_process, membership_sync and report", id.Name, id.Services)
		}
	}
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("-m all exited with %v after SIGTERM:\n%s", err, tail(p.out.String()))
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("-m all did not stop within 10 s of SIGTERM:\n%s", tail(p.out.String()))
	}
	if !strings.Contains(p.out.String(), `"agent stopped"`) {
		t.Fatalf("no clean stop in the log:\n%s", tail(p.out.String()))
	}
}

// TestAllModesRefusesNothingToDo checks that -m all with no backend keys is a configuration error.
func TestAllModesRefusesNothingToDo(t *testing.T) {
	sim := waldursim.New(waldursim.Options{Token: scenario.Token})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	w := scenario.New(sim, scenario.Options{Users: 1})
	dir := t.TempDir()
	text := w.Config(srv.URL)
	for _, k := range []string{"order_processing_backend", "membership_sync_backend", "reporting_backend"} {
		text = strings.Replace(text, "    "+k+": inmemory\n", "", 1)
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t}
	r := e.run("-m", "all", "-c", path, "--once")
	if r.code != 2 || !strings.Contains(r.stderr, "mode all has nothing to do") {
		t.Fatalf("want exit 2 naming the problem, got %s", r)
	}
	if sim.TotalCalls() != 0 {
		t.Fatalf("%d Waldur requests before refusing the configuration", sim.TotalCalls())
	}
}

// TestSystemdUnitsStartTheAgent runs the ExecStart line of each unit in systemd/ (binary and
// configuration path swapped for the test's, one pass) so a unit never names a flag or mode the
// binary refuses.
func TestSystemdUnitsStartTheAgent(t *testing.T) {
	for _, unit := range []string{"site-agent.service", "site-agent@.service"} {
		t.Run(unit, func(t *testing.T) {
			e := newEnv(t, waldursim.Options{})
			data, err := os.ReadFile(filepath.Join("..", "..", "systemd", unit))
			if err != nil {
				t.Fatal(err)
			}
			var exec string
			for _, line := range strings.Split(string(data), "\n") {
				if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
					exec = v
				}
			}
			args := strings.Fields(strings.NewReplacer("%i", "order_process", "/etc/waldur/waldur-site-agent-config.yaml", e.config).Replace(exec))
			if len(args) < 2 || args[0] != "/usr/bin/site-agent" {
				t.Fatalf("unexpected ExecStart %q", exec)
			}
			r := e.run(append(args[1:], "--once")...)
			if r.code != 0 {
				t.Fatalf("%s: %s", exec, r)
			}
		})
	}
}

// TestAllModesDryRunWritesNothing: -m all --dry-run reads every offering and writes nowhere.
func TestAllModesDryRunWritesNothing(t *testing.T) {
	a := newAllEnv(t)
	a.once("all", "--dry-run")
	calls := a.sim.Calls()
	if calls["marketplace_orders_list"] != len(a.offerings) || calls["marketplace_provider_resources_list"]+calls["marketplace_resources_list"] < 2*len(a.offerings) {
		t.Fatalf("the dry run did not read orders and resources of every offering for every mode: %v", calls)
	}
	if n := a.orderStates()[waldursim.OrderPendingProvider]; n != 3*ordersPerOffering {
		t.Fatalf("%d orders still pending, want all %d: %v", n, 3*ordersPerOffering, a.orderStates())
	}
	if ids := a.sim.Identities(); len(ids) != 0 {
		t.Fatalf("a dry run registered identities: %+v", ids)
	}
	for _, path := range a.states {
		if _, err := os.Stat(path); err == nil {
			t.Fatalf("a dry run wrote the backend state %s", path)
		}
	}
}
