package e2e

import (
	"encoding/json"
	"errors"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/waldursim"
	"github.com/waldur/site-agent/internal/testenv"
	"github.com/waldur/site-agent/internal/testenv/rmqenv"
)

// BenchmarkEventLatency measures event_process from outside: the built binary, the Waldur
// simulator publishing into a broker, and the simulator's own clock for each order (created →
// set_state_done). Orders go one at a time (latency, not throughput), 100 of them after 5 for
// warm-up. Then the broker is restarted with an order created while it is down (its event is
// lost): recovered is how long after the broker's return that order is done (reconciliation
// on reconnect), after-restart how long an order created right after the return takes.
//
// The broker is the real RabbitMQ of scripts/rabbitmq/up.sh when it runs and
// SITE_AGENT_REAL_TESTS=1 (make bench-events), else the in-process one. Backends: inmemory
// (with its state file) always; rancher (Rancher simulator over a real kube-apiserver, no
// Keycloak) in the real-server tier only.
func BenchmarkEventLatency(b *testing.B) {
	b.Run("inmemory", func(b *testing.B) {
		broker := benchBroker(b)
		e := newEventEnv(b, broker)
		eventLatency(b, e, nil)
	})
	b.Run("rancher", func(b *testing.B) {
		if testenv.Gate() != nil {
			b.Skip("rancher: needs the real Kubernetes control plane (SITE_AGENT_REAL_TESTS=1, scripts/kube/build.sh)")
		}
		broker := benchBroker(b)
		re := newRancherEnvWith(b, false, waldursim.Options{Broker: broker})
		e := &eventEnv{env: re.env, broker: broker}
		e.enableEvents(`    backend_type: "rancher"` + "\n")
		eventLatency(b, e, map[string]float64{"cpu": 1, "ram": 1, "storage": 1})
	})
}

func benchBroker(b *testing.B) eventBroker {
	if testenv.Gate() == nil {
		if _, err := rmqenv.LoadFile(rmqenv.EnvFile()); !errors.Is(err, fs.ErrNotExist) {
			b.Log("broker: real RabbitMQ")
			return newRealBroker(b)
		}
	}
	b.Log("broker: in-process (start scripts/rabbitmq/up.sh and set SITE_AGENT_REAL_TESTS=1 for RabbitMQ)")
	return newSimBroker(b)
}

func eventLatency(b *testing.B, e *eventEnv, limits map[string]float64) {
	if limits == nil {
		limits = map[string]float64{"cpu": 1}
	}
	p := e.startAgent()
	waitFor(b, 30*time.Second, "readiness", e.ready)
	one := func(name string) time.Duration {
		o := e.world.CreateOrder(name, limits)
		waitFor(b, 30*time.Second, "order "+name, func() bool { return e.allDone([]string{o.UUID}) })
		return e.latencies([]string{o.UUID})[0]
	}
	for i := range 5 {
		one("warm" + strconv.Itoa(i))
	}
	calls := e.sim.TotalCalls()
	var ids []string
	for i := range 100 {
		o := e.world.CreateOrder("lat"+strconv.Itoa(i), limits)
		ids = append(ids, o.UUID)
		waitFor(b, 30*time.Second, "order", func() bool { return e.allDone([]string{o.UUID}) })
	}
	lat := e.latencies(ids)
	perOrder := float64(e.sim.TotalCalls()-calls) / float64(len(ids))
	b.ReportMetric(ms(pct(lat, 50)), "ms-p50")
	b.ReportMetric(ms(pct(lat, 99)), "ms-p99")
	b.ReportMetric(ms(lat[len(lat)-1]), "ms-max")
	b.ReportMetric(perOrder, "waldur-requests/order")
	b.ReportMetric(ms(pct(backendTimes(p.out.String(), ids), 50)), "ms-backend-create-p50")

	e.broker.down(b)
	waitFor(b, 30*time.Second, "readiness to drop", func() bool { return !e.ready() })
	lost := e.world.CreateOrder("while-down", limits)
	e.broker.up(b)
	back := time.Now()
	after := one("after-restart")
	waitFor(b, 30*time.Second, "the order whose event was lost", func() bool { return e.allDone([]string{lost.UUID}) })
	o, _ := e.sim.Order(lost.UUID)
	// Zero when the agent had it done before restart.sh saw every port of the broker answer.
	b.ReportMetric(ms(max(0, o.Modified.Sub(back))), "ms-recovered-after-restart")
	b.ReportMetric(ms(after), "ms-latency-after-restart")
}

// enableEvents adds the event keys after every line equal to anchor in the config.
func (e *eventEnv) enableEvents(anchor string) {
	host, port, path := e.broker.host()
	text := strings.ReplaceAll(readFile(e.t, e.config), anchor, anchor+"    stomp_enabled: true\n"+
		"    stomp_ws_host: "+host+"\n    stomp_ws_port: "+port+"\n    stomp_ws_path: "+path+"\n    websocket_use_tls: false\n")
	writeFile(e.t, e.config, text)
}

// backendTimes are, from the agent's log, approval → "resource ready" of each order: the
// backend's own share of the latency (millisecond timestamps).
func backendTimes(log string, ids []string) []time.Duration {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	approved := map[string]time.Time{}
	var out []time.Duration
	for _, line := range strings.Split(log, "\n") {
		var ev struct {
			Event, Order, Timestamp string
		}
		if json.Unmarshal([]byte(line), &ev) != nil || !want[ev.Order] {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, ev.Timestamp)
		if err != nil {
			continue
		}
		switch ev.Event {
		case "order approved":
			approved[ev.Order] = at
		case "resource ready":
			if a, ok := approved[ev.Order]; ok {
				out = append(out, at.Sub(a))
			}
		}
	}
	slices.Sort(out)
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
