package modes

import (
	"context"
	"net"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/inmemory"
	"github.com/waldur/site-agent/internal/sim/stompsim"
	"github.com/waldur/site-agent/internal/sim/waldursim"
	"github.com/waldur/site-agent/internal/stomp"
	"github.com/waldur/site-agent/internal/telemetry"
)

// evRig is an in-process event_process agent: Waldur simulator → in-process STOMP broker →
// listeners → the in-memory backend.
type evRig struct {
	*flow
	broker *stompsim.Broker
	mode   *EventMode
	stop   context.CancelFunc
	done   chan struct{}
}

func newEventRig(t *testing.T) *evRig {
	t.Helper()
	return newEventRigWith(t, nil)
}

// newEventRigWith is newEventRig whose order and membership sides' backends wrap changes (a
// backend that hangs, say); nil leaves the in-memory backend as it is.
func newEventRigWith(t *testing.T, wrap func(*backends.Set)) *evRig {
	t.Helper()
	broker := stompsim.New(stompsim.Options{})
	f := newFlow(t, waldursim.Options{Broker: broker}, inmemory.Settings{})
	f.now = time.Time{} // real time: heart-beats and backoff run on the wall clock
	f.env.Now = nil
	bsrv := httptest.NewServer(broker)
	t.Cleanup(bsrv.Close)
	host, port, _ := net.SplitHostPort(bsrv.Listener.Addr().String())
	off := f.unit.Offering
	off.StompEnabled = true
	off.EventBroker.Host, off.EventBroker.Path, off.EventBroker.TLS = host, "/ws", false
	off.EventBroker.Port, _ = strconv.Atoi(port)
	f.env.Mode = "event_process"
	f.env.Status = telemetry.NewStatus("t")
	reg := &Registrar{Env: f.env, Started: time.Now()}
	orders, membership := f.unit.Backend, f.unit.Backend
	if wrap != nil {
		wrap(&orders)
		wrap(&membership)
	}
	m, units := NewEventMode(f.env, reg, []EventOffering{{Offering: off, Waldur: f.unit.Waldur, Orders: orders,
		Membership: membership, Log: f.unit.Log}}, EventModeOptions{HeartBeat: time.Second,
		Backoff: stomp.Backoff{RefusedMin: 50 * time.Millisecond, RefusedMax: 200 * time.Millisecond}})
	r := &evRig{flow: f, broker: broker, mode: m}
	f.unit = units[0]
	runner := &Runner{Env: f.env, Mode: m, Units: units, Period: time.Hour, Register: reg.Register, Grace: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop, r.done = cancel, make(chan struct{})
	go func() { defer close(r.done); _ = runner.Run(ctx, nil) }()
	t.Cleanup(func() { cancel(); <-r.done })
	r.waitFor("listeners subscribed", func() bool { return m.Ready() == nil })
	r.settle()
	return r
}

func (r *evRig) waitFor(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// settle waits until the simulator has been quiet for 200 ms (start-up passes are over).
func (r *evRig) settle() {
	last, since := -1, time.Now()
	for time.Since(since) < 200*time.Millisecond {
		if n := r.sim.TotalCalls(); n != last {
			last, since = n, time.Now()
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *evRig) members(resourceUUID string) []string {
	objs, _ := r.be.Objects()
	for _, o := range objs {
		if o.ResourceUUID == resourceUUID {
			return o.Members
		}
	}
	return nil
}

func (r *evRig) messages(result string) float64 {
	total := 0.0
	for _, typ := range []string{"order", "user_role", "resource", "service_account", "course_account", "offering_user"} {
		total += testutil.ToFloat64(r.env.Metrics.EventMessages.WithLabelValues(r.unit.metricID(), typ, result))
	}
	return total
}

func TestOrderEventsAreProcessedAsTheyArrive(t *testing.T) {
	r := newEventRig(t)
	subs := r.sim.EventSubscriptions()
	if len(subs) != 6 { // order + five membership types; 8.0.5 has no offering_resources_sync
		t.Fatalf("%d subscriptions", len(subs))
	}
	r.sim.ResetCalls()
	var ids []string
	for i := range 5 {
		ids = append(ids, r.world.CreateOrder("ev"+strconv.Itoa(i), map[string]float64{"cpu": 1}).UUID)
	}
	r.waitFor("orders done", func() bool {
		for _, id := range ids {
			if r.order(id).State != waldursim.OrderDone {
				return false
			}
		}
		return true
	})
	r.settle()
	calls := r.sim.Calls()
	if calls["marketplace_orders_list"] != 0 {
		t.Errorf("events should not need order listings: %d", calls["marketplace_orders_list"])
	}
	// One GET per order: the executing and done events of the agent's own changes need none.
	if got := calls["marketplace_orders_retrieve"]; got != len(ids) {
		t.Errorf("%d order fetches for %d orders", got, len(ids))
	}
	if objs, _ := r.be.Objects(); len(objs) != 5 {
		t.Errorf("%d backend objects", len(objs))
	}
}

func TestNonActionableOrderEventsMakeNoRESTCall(t *testing.T) {
	r := newEventRig(t)
	res := r.sim.AddResource(waldursim.Resource{Name: "x", OfferingUUID: r.world.Offering.UUID, ProjectUUID: r.world.Project.UUID})
	r.settle()
	r.sim.ResetCalls()
	acked := r.broker.Stats().Acked
	for _, st := range []string{waldursim.OrderPendingConsumer, waldursim.OrderDone, waldursim.OrderCanceled,
		waldursim.OrderRejected, waldursim.OrderErred, waldursim.OrderPendingProject, waldursim.OrderPendingStart} {
		r.sim.AddOrder(waldursim.Order{Type: waldursim.OrderUpdate, ResourceUUID: res.UUID, State: st})
	}
	r.waitFor("seven events handled", func() bool { return r.broker.Stats().Acked-acked >= 7 })
	if n := r.sim.TotalCalls(); n != 0 {
		t.Errorf("%d REST calls for events that need none: %v", n, r.sim.Calls())
	}
	if d := r.messages("dropped"); d != 7 {
		t.Errorf("%v dropped", d)
	}
}

func TestRoleAndAccountEventsSyncTheProjectsResources(t *testing.T) {
	r := newEventRig(t)
	o := r.world.CreateOrder("team", map[string]float64{"cpu": 1})
	r.waitFor("order done", func() bool { return r.order(o.UUID).State == waldursim.OrderDone })
	res := r.order(o.UUID).ResourceUUID
	carol := r.sim.AddUser(waldursim.User{Username: "carol", Email: "carol@physics.example"})
	r.sim.AddOfferingUser(waldursim.OfferingUser{OfferingUUID: r.world.Offering.UUID, UserUUID: carol.UUID, Username: "phys_carol"})
	r.sim.AddProjectMember(r.world.Project.UUID, carol.UUID, "PROJECT.MEMBER")
	r.waitFor("carol added", func() bool { return slices.Contains(r.members(res), "phys_carol") })
	r.sim.RemoveProjectMember(r.world.Project.UUID, carol.UUID)
	r.waitFor("carol removed", func() bool { return !slices.Contains(r.members(res), "phys_carol") })

	acc := r.sim.AddServiceAccount(waldursim.ServiceAccount{ProjectUUID: r.world.Project.UUID, Username: "svc-robot"})
	r.waitFor("service account added", func() bool { return slices.Contains(r.members(res), "svc-robot") })
	r.sim.SetAccountState(acc.UUID, "Closed")
	r.waitFor("service account removed", func() bool { return !slices.Contains(r.members(res), "svc-robot") })

	r.sim.SetResourceFlags(res, true, false, false)
	r.waitFor("resource paused", func() bool {
		objs, _ := r.be.Objects()
		return len(objs) == 1 && objs[0].Paused
	})
	if n := r.messages("failed") + r.messages("malformed"); n != 0 {
		t.Errorf("%v events failed", n)
	}
}

func TestMalformedEventsAreLoggedAndOthersProcessed(t *testing.T) {
	r := newEventRig(t)
	for _, raw := range []string{"not json", `{"order_uuid": 5}`, `{"order_uuid": "nope", "order_state": "executing"}`, `[1,2]`} {
		if n := r.sim.Publish("order", r.world.Offering.UUID, []byte(raw)); n != 1 {
			t.Fatalf("published to %d queues", n)
		}
	}
	r.waitFor("malformed events counted", func() bool { return r.messages("malformed") == 4 })
	o := r.world.CreateOrder("after-junk", map[string]float64{"cpu": 1})
	r.waitFor("order done", func() bool { return r.order(o.UUID).State == waldursim.OrderDone })
	if c := r.broker.Stats().Connects; c != 6 {
		t.Errorf("junk cost connections: %d connects for 6 listeners", c)
	}
}

func TestOrdersPublishedWhileTheBrokerIsDownAreReconciledOnReconnect(t *testing.T) {
	r := newEventRig(t)
	r.broker.SetDown(true)
	r.waitFor("not ready", func() bool { return r.mode.Ready() != nil })
	o := r.world.CreateOrder("while-down", map[string]float64{"cpu": 1})
	if pub := r.sim.Published(); pub[len(pub)-1].Err == nil {
		t.Fatal("the event reached a broker that is down")
	}
	time.Sleep(300 * time.Millisecond)
	if st := r.order(o.UUID).State; st != waldursim.OrderPendingProvider {
		t.Fatalf("order %s while the broker was down and no pass ran", st)
	}
	back := time.Now()
	r.broker.SetDown(false)
	r.waitFor("order done after reconnect", func() bool { return r.order(o.UUID).State == waldursim.OrderDone })
	t.Logf("order done %s after the broker came back", time.Since(back))
	r.waitFor("ready again", func() bool { return r.mode.Ready() == nil })
}

func TestForcedSyncRunsBothPasses(t *testing.T) {
	r := newEventRig(t)
	eo := r.mode.offerings[r.unit]
	// Not through the broker: the 8.0.5 simulator has no offering_resources_sync queue.
	r.broker.SetDown(true)
	o := r.world.CreateOrder("forced", map[string]float64{"cpu": 1})
	res, err := r.mode.dispatch(context.Background(), eo, eo.members, syncType, []byte(`{"offering_uuid": "`+r.world.Offering.UUID+`"}`))
	if res != evHandled || err != nil {
		t.Fatalf("%s %v", res, err)
	}
	r.waitFor("order done by the forced order pass", func() bool { return r.order(o.UUID).State == waldursim.OrderDone })
	if res, _ := r.mode.dispatch(context.Background(), eo, eo.members, syncType, []byte(`{"offering_uuid": "e2ef0000000000000000000000000999"}`)); res != evMalformed {
		t.Errorf("another offering's sync: %s", res)
	}
}

func TestWaldurVersionGate(t *testing.T) {
	for v, want := range map[string]bool{"8.0.5": false, "8.0.9": true, "8.1.0rc19.dev20260730": true, "9": false, "dev": false, "8.0.10": true} {
		if got := atLeast(v, 8, 0, 9); got != want {
			t.Errorf("%s: %v", v, got)
		}
	}
}
