package modes

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/sim/waldursim"
	"github.com/waldur/site-agent/internal/stomp"
)

// hang makes a backend hang on demand, as a Rancher or a Keycloak behind an overloaded proxy
// does: while held, pings and member listings wait until release (or their context ends). A
// full pass pings first, so it hangs until release; event work on one order does not ping (a
// recent ping stands for it). It counts the listings finished per backend object.
type hang struct {
	mu       sync.Mutex
	gate     chan struct{} // non-nil while held
	inflight int
	listed   map[string]int // by backend id
}

func (h *hang) hold() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gate == nil {
		h.gate = make(chan struct{})
	}
}

func (h *hang) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gate != nil {
		close(h.gate)
		h.gate = nil
	}
}

func (h *hang) wait(ctx context.Context) error {
	h.mu.Lock()
	gate := h.gate
	h.mu.Unlock()
	if gate == nil {
		return nil
	}
	select {
	case <-gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wrap puts the gate in front of a backend's pings and member listings.
func (h *hang) wrap(set *backends.Set) {
	set.Pinger = hungPinger{set.Pinger, h}
	set.Members = hungMembers{set.Members, h}
}

type hungPinger struct {
	backends.Pinger
	h *hang
}

func (p hungPinger) Ping(ctx context.Context) error {
	if err := p.h.wait(ctx); err != nil {
		return err
	}
	return p.Pinger.Ping(ctx)
}

type hungMembers struct {
	backends.MembershipManager
	h *hang
}

func (m hungMembers) Members(ctx context.Context, res backends.Resource) ([]string, error) {
	m.h.mu.Lock()
	m.h.inflight++
	m.h.mu.Unlock()
	defer func() {
		m.h.mu.Lock()
		m.h.inflight--
		m.h.listed[res.BackendID]++
		m.h.mu.Unlock()
	}()
	if err := m.h.wait(ctx); err != nil {
		return nil, err
	}
	return m.MembershipManager.Members(ctx, res)
}

// floodRig is an event rig whose backend hangs on demand, with one resource whose member
// listings count the membership passes that finished.
type floodRig struct {
	*evRig
	hang   *hang
	id     string // the resource's backend id
	listed int    // its listings before the test's events
}

func newFloodRig(t *testing.T) *floodRig {
	h := &hang{listed: map[string]int{}}
	r := &floodRig{evRig: newEventRigWith(t, h.wrap), hang: h}
	t.Cleanup(h.release) // before the rig stops: nothing hangs past the test
	o := r.world.CreateOrder("before-flood", map[string]float64{"cpu": 1})
	r.waitFor("first order done", func() bool { return r.order(o.UUID).State == waldursim.OrderDone })
	res, _ := r.sim.Resource(r.order(o.UUID).ResourceUUID)
	r.id = res.BackendID
	r.quiet()
	r.listed = r.listings()
	r.sim.ResetCalls()
	return r
}

// listings is how many member listings of the resource finished since the rig was ready.
func (r *floodRig) listings() int {
	r.hang.mu.Lock()
	defer r.hang.mu.Unlock()
	return r.hang.listed[r.id] - r.listed
}

// quiet waits until no listing is in flight and the simulator has been quiet (settle).
func (r *floodRig) quiet() {
	r.t.Helper()
	for range 3 {
		r.waitFor("member listings over", func() bool {
			r.hang.mu.Lock()
			defer r.hang.mu.Unlock()
			return r.hang.inflight == 0
		})
		r.settle()
	}
}

func (r *floodRig) coalesced(side string) int {
	return int(testutil.ToFloat64(r.env.Metrics.EventPassesCoalesced.WithLabelValues(r.unit.metricID(), side)))
}

func (r *evRig) offeringUserEvents(result string) int {
	return int(testutil.ToFloat64(r.env.Metrics.EventMessages.WithLabelValues(r.unit.metricID(), "offering_user", result)))
}

// publishFlood publishes n offering_user events without backend ids through the broker, and
// hands forced forced-sync events to the handler a listener's worker calls (the 8.0.5
// simulator has no such queue), each on its own goroutine; done is closed when all of those
// returned, that is, were acknowledged.
func (r *floodRig) publishFlood(n, forced int) (done chan struct{}) {
	eo := r.mode.offerings[r.unit]
	handle := r.mode.handler(eo, eo.members, syncType)
	body := []byte(`{"offering_uuid":"` + r.world.Offering.UUID + `"}`)
	var wg sync.WaitGroup
	actions := []string{"create", "update", "username_set", "delete"}
	for i := range n {
		ev := fmt.Sprintf(`{"offering_user_uuid":"%032x","action":%q,"resource_backend_ids":[]}`, i, actions[i%4])
		if got := r.sim.Publish("offering_user", r.world.Offering.UUID, []byte(ev)); got != 1 {
			r.t.Fatalf("published to %d queues", got)
		}
		if i%(n/forced) == 0 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				handle(context.Background(), stomp.Message{Body: body, Received: time.Now()})
			}()
		}
	}
	done = make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	return done
}

// A flood of offering_user events without backend ids and of forced syncs used to run one full
// pass per event on the listeners' workers, back to back: an event was acknowledged only when
// its pass ended, and an offering_user event naming a resource waited behind them all. Now,
// while the backend hangs and with it the first pass, every event is acknowledged and an order
// is done; once it answers, the flood has cost at most two passes of each side, and the
// targeted sync did not wait for them.
func TestEventFloodCoalescesFullPasses(t *testing.T) {
	const flood, forced = 200, 40
	r := newFloodRig(t)
	acked0, handled0 := r.broker.Stats().Acked, r.offeringUserEvents(evHandled)
	members0, orders0 := r.coalesced(passMembership), r.coalesced(passOrders)
	r.hang.hold()
	start := time.Now()
	forcedDone := r.publishFlood(flood, forced)
	r.sim.Publish("offering_user", r.world.Offering.UUID, []byte(`{"action":"create","resource_backend_ids":["`+r.id+`"]}`))
	order := r.world.CreateOrder("after-flood", map[string]float64{"cpu": 1})

	r.waitFor("the flood acknowledged while the passes hang", func() bool {
		return r.offeringUserEvents(evHandled)-handled0 >= flood && r.broker.Stats().Acked-acked0 >= flood
	})
	acked := time.Since(start)
	r.waitFor("forced syncs acknowledged while the passes hang", func() bool {
		select {
		case <-forcedDone:
			return true
		default:
			return false
		}
	})
	r.waitFor("order after the flood done while the passes hang", func() bool { return r.order(order.UUID).State == waldursim.OrderDone })
	done := time.Since(start)
	r.hang.release()
	r.waitFor("targeted event handled", func() bool { return r.offeringUserEvents(evHandled)-handled0 == flood+1 })
	if n := r.listings(); n > 3 { // the pass that held the resource, its own, at most the second pass
		t.Errorf("the targeted sync waited for %d syncs of its resource", n)
	}
	r.quiet()
	calls := r.sim.Calls()
	members := calls["marketplace_provider_resources_list"] - 1 // the targeted event lists them too
	orders := calls["marketplace_orders_list"]
	if members < 1 || members > 2 || orders < 1 || orders > 2 {
		t.Fatalf("%d membership and %d order passes for %d + %d events; want 1 or 2 each", members, orders, flood, forced)
	}
	if got := r.coalesced(passMembership) - members0; got != flood+forced-members {
		t.Errorf("%d membership asks coalesced, want %d", got, flood+forced-members)
	}
	if got := r.coalesced(passOrders) - orders0; got != forced-orders {
		t.Errorf("%d order asks coalesced, want %d", got, forced-orders)
	}
	t.Logf("flood acknowledged in %s, the order after it done in %s; passes: %d membership, %d order", acked, done, members, orders)
}

// A full pass an event asked for runs after the event was acknowledged: when it fails, the log
// and /status's last errors say so (the event itself counts as handled).
func TestFailedEventPassIsReported(t *testing.T) {
	r := newEventRig(t)
	handled := r.offeringUserEvents(evHandled)
	r.sim.SetFaults(waldursim.Faults{Rate: 1, Operations: []string{"marketplace_provider_resources_list"}})
	r.sim.Publish("offering_user", r.world.Offering.UUID, []byte(`{"action":"delete","resource_backend_ids":[]}`))
	r.waitFor("the pass's failure on /status", func() bool {
		for _, e := range r.env.Status.Snapshot().Errors {
			if e.Source == ModeEventProcess && strings.HasPrefix(e.Message, "membership pass: list resources") {
				return true
			}
		}
		return false
	})
	r.sim.SetFaults(waldursim.Faults{})
	if got := r.offeringUserEvents(evHandled) - handled; got != 1 {
		t.Errorf("%d offering_user events handled, want 1", got)
	}
}

// panicky is a backend whose ping panics while armed.
type panicky struct {
	backends.Pinger
	armed *atomic.Bool
}

func (p panicky) Ping(ctx context.Context) error {
	if p.armed.Load() {
		panic("backend client bug")
	}
	return p.Pinger.Ping(ctx)
}

// A background pass that panics is recovered (it runs on no worker or cycle that would), counted
// and reported; the agent goes on.
func TestPanickingEventPassIsRecovered(t *testing.T) {
	var armed atomic.Bool
	r := newEventRigWith(t, func(s *backends.Set) { s.Pinger = panicky{s.Pinger, &armed} })
	panics := testutil.ToFloat64(r.env.Metrics.Panics)
	armed.Store(true)
	r.sim.Publish("offering_user", r.world.Offering.UUID, []byte(`{"action":"create","resource_backend_ids":[]}`))
	r.waitFor("the panic counted", func() bool { return testutil.ToFloat64(r.env.Metrics.Panics) > panics })
	r.waitFor("the panic on /status", func() bool {
		errs := r.env.Status.Snapshot().Errors
		return len(errs) > 0 && strings.HasPrefix(errs[0].Message, "membership pass: panic: backend client bug")
	})
	armed.Store(false)
	o := r.world.CreateOrder("after-panic", map[string]float64{"cpu": 1})
	r.waitFor("order done after the panic", func() bool { return r.order(o.UUID).State == waldursim.OrderDone })
}
