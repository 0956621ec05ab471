package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
	"github.com/waldur/site-agent/internal/telemetry"
)

// operatorEnv is an agent running every mode for two offerings — "Cloud Compute" polling (its
// backend takes latency per operation, so orders stay in flight a while) and "Event Cloud"
// served by events from the broker simulator — with Waldur refusing usage reports (503), so
// the report cycles fail and Waldur shows as degraded: what an operator's /status, /metrics and
// the chart's alerts have to show.
type operatorEnv struct {
	*env
	events   waldursim.Offering
	base     string // http://addr of the listener
	proc     *proc
	orders   []string
	resource string // a resource of Cloud Compute, created by the first order
}

func newOperatorEnv(t *testing.T, latency string) *operatorEnv {
	t.Helper()
	broker := newSimBroker(t)
	e := &operatorEnv{env: newEnv(t, waldursim.Options{Broker: broker})}
	e.events = e.world.AddOffering("Event Cloud")
	text := e.world.ConfigAll(e.url, []waldursim.Offering{e.world.Offering, e.events}, func(i int) []string {
		s := []string{"state_file: " + e.state + []string{"", ".events"}[i]}
		if i == 0 {
			s = append(s, "latency: "+latency, "usage_fraction: 0.5")
		}
		return s
	})
	host, port, path := broker.host()
	anchor := `waldur_offering_uuid: "` + e.events.UUID + `"` + "\n"
	text = strings.Replace(text, anchor, anchor+"    stomp_enabled: true\n    stomp_ws_host: "+host+"\n    stomp_ws_port: "+port+
		"\n    stomp_ws_path: "+path+"\n    websocket_use_tls: false\n", 1)
	text = "heartbeat_file: " + e.dir + "/heartbeat\nupstreams:\n  waldur: {retries: 1, backoff_min: 10ms, backoff_max: 20ms}\n" + text
	writeFile(t, e.config, text)
	e.sim.SetFaults(waldursim.Faults{Rate: 1, Kinds: []waldursim.FaultKind{waldursim.FaultStatus503},
		Operations: []string{"marketplace_component_usages_set_usage"}})
	addr := freeAddr(t)
	e.base = "http://" + addr
	e.proc = e.start("-m", "all", "-c", e.config, "--period", "2s", "--listen", addr)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("agent output:\n%s", tail(e.proc.out.String()))
		}
	})
	waitFor(t, 15*time.Second, "the listener", func() bool { return get(e.base+"/healthz") == 200 })
	first := e.world.CreateOrder("lab-a", map[string]float64{"cpu": 2})
	e.orders = append(e.orders, first.UUID, e.world.CreateOrderIn(e.events, "ev-a", map[string]float64{"cpu": 1}).UUID)
	waitFor(t, 30*time.Second, "the first orders done", func() bool { return e.done(e.orders...) })
	o, _ := e.sim.Order(first.UUID)
	e.resource = o.ResourceUUID
	return e
}

func (e *operatorEnv) done(ids ...string) bool {
	for _, id := range ids {
		if o, _ := e.sim.Order(id); o.State != waldursim.OrderDone {
			return false
		}
	}
	return true
}

func (e *operatorEnv) snapshot(t *testing.T) telemetry.Snapshot {
	t.Helper()
	var s telemetry.Snapshot
	if err := json.Unmarshal([]byte(body(t, e.base+"/status.json")), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// waitInFlight creates two more orders of Cloud Compute and waits until /status shows one in
// flight.
func (e *operatorEnv) waitInFlight(t *testing.T) {
	t.Helper()
	e.orders = append(e.orders, e.world.UpdateOrder(e.resource, map[string]float64{"cpu": 3}).UUID,
		e.world.CreateOrder("lab-b", map[string]float64{"cpu": 1}).UUID)
	waitFor(t, 20*time.Second, "an order in flight on /status", func() bool {
		for _, o := range e.snapshot(t).Offerings {
			if len(o.InFlight) > 0 {
				return true
			}
		}
		return false
	})
}

// lastResult is the result of the last cycle of an offering's mode on /status ("" before one).
func lastResult(s telemetry.Snapshot, offering, mode string) string {
	for _, o := range s.Offerings {
		for _, m := range o.Modes {
			if o.Name == offering && m.Mode == mode && m.Last != nil {
				return m.Last.Result
			}
		}
	}
	return ""
}

// /status and /status.json show each offering and mode with its last and next cycle, orders in
// flight and pending, the degraded upstream, the leader and the last errors — and no secret.
func TestStatusPageShowsOfferingsModesOrdersAndErrors(t *testing.T) {
	e := newOperatorEnv(t, "1s")
	e.waitInFlight(t)
	s := e.snapshot(t)
	inFlight := false
	for _, o := range s.Offerings {
		inFlight = inFlight || len(o.InFlight) > 0 && o.Pending > 0
	}
	if !inFlight {
		t.Errorf("no order in flight and pending any more: %+v", s.Offerings)
	}
	// A report cycle that finds nothing to send succeeds (as while the Update order keeps the
	// resource busy): wait for one whose set_usage the simulator failed to be the last.
	waitFor(t, 20*time.Second, "a failed report cycle last and Waldur degraded", func() bool {
		s = e.snapshot(t)
		return len(s.Degraded) > 0 && len(s.Errors) > 0 && lastResult(s, "Cloud Compute", "report") == "error"
	})
	modes := map[string]string{}
	for _, o := range s.Offerings {
		for _, m := range o.Modes {
			modes[o.Name] += m.Mode + " "
			want := "ok" // Event Cloud's resources use nothing: no usage is sent
			if o.Name == "Cloud Compute" && m.Mode == "report" {
				want = "error"
			}
			if m.Last == nil || m.Last.Result != want || m.Next == nil || m.Cycles == 0 {
				t.Errorf("%s %s: %+v (last %+v), want a last cycle with result %s", o.Name, m.Mode, m, m.Last, want)
			}
		}
	}
	want := map[string]string{"Cloud Compute": "order_process membership_sync report ", "Event Cloud": "report event_process "}
	for name, w := range want {
		if modes[name] != w {
			t.Errorf("%s runs %q on /status, want %q", name, modes[name], w)
		}
	}
	if s.Degraded[0].Upstream != "waldur" || !strings.Contains(s.Degraded[0].LastError, "503") {
		t.Errorf("degraded upstreams %+v", s.Degraded)
	}
	if !strings.Contains(s.Errors[0].Message, "503") || s.Errors[0].Source != "report" {
		t.Errorf("last errors %+v", s.Errors[:1])
	}
	if s.Leader.Election || !s.Leader.Leading {
		t.Errorf("leader %+v without leader election", s.Leader)
	}
	page := body(t, e.base+"/status")
	for _, w := range []string{"Cloud Compute", "Event Cloud", `data-mode="event_process"`, `data-mode="order_process"`, "Degraded upstreams",
		"Last errors", "leader election is off"} {
		if !strings.Contains(page, w) {
			t.Errorf("/status lacks %q", w)
		}
	}
	if strings.Contains(page, scenario.Token) || strings.Contains(body(t, e.base+"/status.json"), scenario.Token) {
		t.Fatal("/status shows the Waldur token")
	}
}
