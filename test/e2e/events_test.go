package e2e

import (
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/stompsim"
	"github.com/waldur/site-agent/internal/sim/waldursim"
	"github.com/waldur/site-agent/internal/testenv/rmqenv"
)

// eventBroker is the broker an event test runs against: the in-process simulator (tier 1) or
// the real RabbitMQ (tier 2). down and up make an outage.
type eventBroker interface {
	waldursim.EventBroker
	host() (host, port, path string)
	down(t testing.TB)
	up(t testing.TB)
	refused() int // CONNECTs refused so far (-1: not known)
}

type simBroker struct {
	*stompsim.Broker
	addr string
}

func newSimBroker(t testing.TB) *simBroker {
	b := stompsim.New(stompsim.Options{})
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	return &simBroker{Broker: b, addr: srv.Listener.Addr().String()}
}

func (b *simBroker) host() (string, string, string) {
	h, p, _ := net.SplitHostPort(b.addr)
	return h, p, "/ws"
}
func (b *simBroker) down(testing.TB) { b.SetDown(true) }
func (b *simBroker) up(testing.TB)   { b.SetDown(false) }
func (b *simBroker) refused() int    { return b.Stats().Refused }

type realBroker struct {
	*rmqenv.Broker
	env *rmqenv.Env
}

func newRealBroker(t testing.TB) *realBroker {
	env := rmqenv.Load(t)
	return &realBroker{Broker: env.Broker(t), env: env}
}

func (b *realBroker) host() (string, string, string) { return b.env.WebSTOMP() }
func (b *realBroker) down(t testing.TB)              { b.env.Stop(t) }
func (b *realBroker) up(t testing.TB)                { b.env.Start(t) }
func (b *realBroker) refused() int                   { return -1 }

// eventEnv is an env whose simulator publishes to a broker and whose config enables events.
type eventEnv struct {
	*env
	broker eventBroker
	health string // http://addr of /readyz and /metrics
}

func newEventEnv(t testing.TB, broker eventBroker) *eventEnv {
	t.Helper()
	e := &eventEnv{env: newEnv(t, waldursim.Options{Broker: broker}), broker: broker}
	e.enableEvents("    backend_type: inmemory\n")
	return e
}

// startAgent runs event_process (or the given mode) and waits until its health listener answers.
func (e *eventEnv) startAgent(mode ...string) *proc {
	e.t.Helper()
	addr := freeAddr(e.t)
	e.health = "http://" + addr
	m := "event_process"
	if len(mode) > 0 {
		m = mode[0]
	}
	p := e.start("-m", m, "-c", e.config, "--listen", addr)
	waitFor(e.t, 10*time.Second, "health listener", func() bool { return get(e.health+"/healthz") == 200 })
	return p
}

func (e *eventEnv) ready() bool { return get(e.health+"/readyz") == 200 }

// latencies are create → done of finished orders (simulator clock).
func (e *eventEnv) latencies(ids []string) []time.Duration {
	var out []time.Duration
	for _, id := range ids {
		if o, ok := e.sim.Order(id); ok && o.State == waldursim.OrderDone {
			out = append(out, o.Modified.Sub(o.Created))
		}
	}
	slices.Sort(out)
	return out
}

func (e *eventEnv) allDone(ids []string) bool {
	for _, id := range ids {
		if o, _ := e.sim.Order(id); o.State != waldursim.OrderDone {
			return false
		}
	}
	return true
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, len(d)*p/100)]
}

func TestEventModeProcessesOrders(t *testing.T) { eventOrders(t, newSimBroker(t)) }

func TestRealRabbitMQEventModeProcessesOrders(t *testing.T) { eventOrders(t, newRealBroker(t)) }

// eventOrders: orders are done as their events arrive, malformed events are logged and
// dropped, SIGTERM stops the agent cleanly.
func eventOrders(t testing.TB, broker eventBroker) {
	e := newEventEnv(t, broker)
	p := e.startAgent()
	waitFor(t, 15*time.Second, "readiness (all listeners subscribed)", e.ready)
	for _, junk := range []string{"not json", `{"order_uuid": 42}`} {
		e.sim.Publish("order", e.world.Offering.UUID, []byte(junk))
	}
	var ids []string
	for i := range 20 {
		ids = append(ids, e.world.CreateOrder("ev"+strconv.Itoa(i), map[string]float64{"cpu": 1}).UUID)
		time.Sleep(20 * time.Millisecond) // one at a time: latency, not throughput
	}
	waitFor(t, 15*time.Second, "orders done", func() bool { return e.allDone(ids) })
	lat := e.latencies(ids)
	t.Logf("event → done over %d orders: p50 %s, max %s", len(lat), pct(lat, 50), lat[len(lat)-1])
	if n := strings.Count(p.out.String(), "malformed event; dropped"); n != 2 {
		t.Errorf("%d malformed events logged, want 2", n)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, p.out)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still running 5 s after SIGTERM")
	}
	if objs := e.objects(); len(objs) != len(ids) {
		t.Errorf("%d backend objects for %d orders", len(objs), len(ids))
	}
}

func TestEventModeSurvivesABrokerOutage(t *testing.T) { eventOutage(t, newSimBroker(t)) }

func TestRealRabbitMQRestartMidStream(t *testing.T) { eventOutage(t, newRealBroker(t)) }

// eventOutage creates orders continuously while the broker goes down and comes back: every
// order ends done exactly once, and orders flow again within 2 s of the broker's return.
func eventOutage(t testing.TB, broker eventBroker) {
	e := newEventEnv(t, broker)
	p := e.startAgent()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("agent output:\n%s", tail(p.out.String()))
			_ = os.WriteFile(filepath.Join(os.TempDir(), "site-agent-"+t.Name()+".log"), []byte(p.out.String()), 0o600)
		}
	})
	waitFor(t, 15*time.Second, "readiness", e.ready)
	var mu sync.Mutex
	var ids []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the stream: one order every 100 ms, bounded
		defer wg.Done()
		for i := 0; i < 600; i++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			o := e.world.CreateOrder("s"+strconv.Itoa(i), map[string]float64{"cpu": 1})
			mu.Lock()
			ids = append(ids, o.UUID)
			mu.Unlock()
		}
	}()
	time.Sleep(time.Second)
	broker.down(t)
	waitFor(t, 10*time.Second, "readiness to drop", func() bool { return !e.ready() })
	time.Sleep(time.Second)
	broker.up(t)
	back := time.Now()
	t.Logf("broker back at %s", back.UTC().Format("15:04:05.000"))
	mu.Lock()
	during := slices.Clone(ids) // includes orders whose events were lost
	mu.Unlock()
	waitFor(t, 20*time.Second, "orders created before the broker came back", func() bool { return e.allDone(during) })
	drained := time.Since(back)
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	waitFor(t, 15*time.Second, "all orders done", func() bool { return e.allDone(ids) })
	waitFor(t, 15*time.Second, "readiness again", e.ready)
	// Orders flow again: the first order created after the broker's return is done this long
	// after the return.
	flow := time.Duration(-1)
	for _, id := range ids[len(during):] {
		if o, _ := e.sim.Order(id); o.Modified.After(back) && (flow < 0 || o.Modified.Sub(back) < flow) {
			flow = o.Modified.Sub(back)
		}
	}
	t.Logf("%d orders, %d created before the broker's return (their events partly lost): backlog done %s after the return; "+
		"first new order done %s after it", len(ids), len(during), drained.Round(time.Millisecond), flow.Round(time.Millisecond))
	if flow < 0 { // how fast is measured by BenchmarkEventLatency, not asserted here
		t.Errorf("no order created after the broker's return was done")
	}
	objs := e.objects()
	seen := map[string]bool{}
	for _, o := range objs {
		if seen[o.ResourceUUID] {
			t.Errorf("resource %s provisioned twice", o.ResourceUUID)
		}
		seen[o.ResourceUUID] = true
	}
	if len(objs) != len(ids) {
		t.Errorf("%d backend objects for %d orders", len(objs), len(ids))
	}
}

func TestEventModeWrongCredentials(t *testing.T) { eventWrongCredentials(t, newSimBroker(t)) }

func TestRealRabbitMQWrongCredentials(t *testing.T) { eventWrongCredentials(t, newRealBroker(t)) }

// eventWrongCredentials: the broker user's password does not match the agent's token. The agent
// says so clearly, retries with backoff (no busy loop), reports not ready, still processes
// orders through reconciliation, and subscribes once the credentials are fixed.
func eventWrongCredentials(t testing.TB, broker eventBroker) {
	e := newEventEnv(t, broker)
	e.sim.SetBrokerPassword("not-the-token")
	early := e.world.CreateOrder("before", map[string]float64{"cpu": 1})
	p := e.startAgent()
	waitFor(t, 15*time.Second, "the start-up pass", func() bool { return e.allDone([]string{early.UUID}) })
	time.Sleep(6 * time.Second)
	if e.ready() {
		t.Fatal("ready although no listener could log in")
	}
	if !strings.Contains(body(t, e.health+"/readyz"), "not connected") {
		t.Errorf("readyz does not say why: %s", body(t, e.health+"/readyz"))
	}
	out := p.out.String()
	refusals := strings.Count(out, "event broker refused the subscription; registering it again and retrying")
	// Six listeners, backoff from 2 s doubling: at most about 4 tries each in 6 s.
	if refusals < 6 || refusals > 6*5 {
		t.Errorf("%d refusals logged in 6 s", refusals)
	}
	if !strings.Contains(out, "Access refused") || strings.Contains(out, scenario.Token) {
		t.Errorf("refusal not explained, or the token leaked")
	}
	if n := broker.refused(); n > 6*5 {
		t.Errorf("%d CONNECTs refused in 6 s: a busy loop", n)
	}
	e.sim.SetBrokerPassword("") // the next create_queue gives the user the token again
	waitFor(t, 90*time.Second, "readiness after the fix", e.ready)
	o := e.world.CreateOrder("after", map[string]float64{"cpu": 1})
	waitFor(t, 10*time.Second, "an order by event", func() bool { return e.allDone([]string{o.UUID}) })
}

// TestAllModesRunsEventsInsteadOfOrderPolling: with -m all an offering with stomp_enabled gets
// event_process (orders by event, membership by event) and report, and no order_process.
func TestAllModesRunsEventsInsteadOfOrderPolling(t *testing.T) {
	e := newEventEnv(t, newSimBroker(t))
	p := e.startAgent("all")
	waitFor(t, 15*time.Second, "readiness", e.ready)
	o := e.world.CreateOrder("all-mode", map[string]float64{"cpu": 1})
	waitFor(t, 10*time.Second, "order done by event", func() bool { return e.allDone([]string{o.UUID}) })
	out := p.out.String()
	if !strings.Contains(out, `"modes":["report","event_process"]`) {
		t.Errorf("modes started: %s", tail(out))
	}
	if calls := e.sim.Calls()["marketplace_orders_list"]; calls > 2 {
		t.Errorf("%d order listings: order_process polled alongside events", calls)
	}
}

func TestEventModeConfigErrors(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	r := e.run("-m", "event_process", "-c", e.config, "--once")
	if r.code != 2 || !strings.Contains(r.stderr, "stomp_enabled") {
		t.Errorf("no stomp offering: %s", r)
	}
	cfg := readFile(t, e.config)
	writeFile(t, e.config, strings.Replace(cfg, "    backend_type: inmemory\n", "    backend_type: inmemory\n    stomp_enabled: true\n    stomp_ws_port: 99999\n", 1))
	r = e.run("-m", "event_process", "-c", e.config, "--once")
	if r.code != 2 || !strings.Contains(r.stderr, "offerings[0].stomp_ws_port") {
		t.Errorf("bad port: %s", r)
	}
	writeFile(t, e.config, strings.Replace(cfg, "    backend_type: inmemory\n", "    backend_type: inmemory\n    stomp_enabled: true\n", 1))
	r = e.run("-m", "order_process", "-c", e.config, "--once")
	if r.code != 2 || !strings.Contains(r.stderr, "served by events: run -m event_process") || !strings.Contains(r.stdout, "offering is served by event_process; skipped") {
		t.Errorf("order_process for an event offering: %s", r)
	}
	if n := e.sim.TotalCalls(); n != 0 {
		t.Errorf("%d calls before the configuration was valid", n)
	}
}
