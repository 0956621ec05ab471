package modes

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/inmemory"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/sim/waldursim"
	"github.com/waldur/site-agent/internal/telemetry"
)

// flakyMode fails its first cycle and succeeds afterwards.
type flakyMode struct{ n atomic.Int32 }

func (*flakyMode) Name() string { return "flaky" }

func (m *flakyMode) RunOnce(context.Context, *Unit) error {
	if m.n.Add(1) == 1 {
		return errors.New("list orders: 502 Bad Gateway")
	}
	return nil
}

// Declare creates the cycle series at zero and shows the offering before any cycle; each cycle
// is counted on the status page and in the last-cycle time; Run says when the next one starts.
func TestRunnerDeclaresAndRecordsCycles(t *testing.T) {
	env := &Env{Metrics: telemetry.NewMetrics(), Status: telemetry.NewStatus("t"), Log: zap.NewNop()}
	u := &Unit{Offering: config.Offering{Name: "HPC", UUID: "E2EF0000-0000-0000-0000-000000000001"}, Log: zap.NewNop(),
		Backend: backends.Set{Name: "inmemory"}}
	r := &Runner{Env: env, Mode: &flakyMode{}, Units: []*Unit{u}, Period: time.Hour}
	r.Declare()
	id := "e2ef0000000000000000000000000001"
	if n := testutil.CollectAndCount(env.Metrics.Cycles); n != 2 {
		t.Fatalf("%d cycle series before any cycle, want ok and error at zero", n)
	}
	if v := testutil.ToFloat64(env.Metrics.OfferingInfo.WithLabelValues(id, "HPC")); v != 1 {
		t.Fatalf("offering info %v", v)
	}
	snap := env.Status.Snapshot()
	if len(snap.Offerings) != 1 || snap.Offerings[0].Modes[0].Mode != "flaky" || snap.Offerings[0].Modes[0].Last != nil {
		t.Fatalf("status before any cycle: %+v", snap.Offerings)
	}
	declared := testutil.ToFloat64(env.Metrics.LastCycle.WithLabelValues("flaky", id))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, nil) }()
	waitUntil(t, "the first cycle", func() bool { return env.Status.Snapshot().Offerings[0].Modes[0].Last != nil })
	cancel()
	<-done
	m := env.Status.Snapshot().Offerings[0].Modes[0]
	if m.Last.Result != "error" || !strings.Contains(m.Last.Error, "502") || m.Next == nil || time.Until(*m.Next) < 59*time.Minute {
		t.Fatalf("after a failed cycle: %+v, last %+v", m, m.Last)
	}
	if errs := env.Status.Snapshot().Errors; len(errs) != 1 || errs[0].Source != "flaky" || errs[0].Offering != "HPC" {
		t.Fatalf("last errors %+v", errs)
	}
	if err := r.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ok, failed := testutil.ToFloat64(env.Metrics.Cycles.WithLabelValues("flaky", id, "ok")),
		testutil.ToFloat64(env.Metrics.Cycles.WithLabelValues("flaky", id, "error")); ok != 1 || failed != 1 {
		t.Fatalf("cycles ok %v, error %v", ok, failed)
	}
	if last := testutil.ToFloat64(env.Metrics.LastCycle.WithLabelValues("flaky", id)); last <= declared {
		t.Fatalf("last cycle time %v not after the declaration's %v", last, declared)
	}
}

// checkOrderLines: each backend line names an order and that order's resource; the lines are
// two creates, a limits change and a deletion.
func checkOrderLines(t *testing.T, lines []observer.LoggedEntry, resourceOf map[string]string) {
	t.Helper()
	ops := map[string]int{}
	for _, e := range lines {
		fields := e.ContextMap()
		order, _ := fields[backends.OrderUUIDField].(string)
		res, _ := fields[backends.ResourceUUIDField].(string)
		if order == "" || resourceOf[order] == "" || res != resourceOf[order] {
			t.Errorf("backend log line %q names order %q and resource %q: %v", e.Message, order, res, fields)
		}
		op, _ := fields["op"].(string)
		ops[op]++
	}
	if ops["create"] != 2 || ops["set_limits"] != 1 || ops["delete"] != 1 {
		t.Fatalf("backend lines by operation %v; want two creates, a set_limits and a delete", ops)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// An order pass shows its orders pending and in flight (gauge and status page), and every line
// the backend logs while working on an order names the order and its resource; in a
// membership pass, the resource.
func TestOrdersAreShownAndBackendLogsNameThem(t *testing.T) {
	f := newFlow(t, waldursim.Options{}, inmemory.Settings{})
	core, logs := observer.New(zapcore.DebugLevel)
	f.be = inmemory.NewBackend(inmemory.Settings{Latency: 100 * time.Millisecond}, f.unit.Offering.Components,
		zap.New(core).With(zap.String("backend", "inmemory")))
	f.unit.Backend = backends.RolesOf("inmemory", f.be)
	f.env.Status = telemetry.NewStatus("t")
	orders := &Orders{Env: f.env}
	r := &Runner{Env: f.env, Mode: orders, Units: []*Unit{f.unit}, Period: time.Hour}
	r.Declare()
	a, b := f.world.CreateOrder("a", map[string]float64{"cpu": 1}), f.world.CreateOrder("b", map[string]float64{"cpu": 2})
	resourceOf := map[string]string{a.UUID: f.order(a.UUID).ResourceUUID, b.UUID: f.order(b.UUID).ResourceUUID}
	done := make(chan error, 1)
	go func() { done <- r.RunOnce(context.Background()) }()
	waitUntil(t, "orders in flight on the status page", func() bool {
		o := f.env.Status.Snapshot().Offerings[0]
		return o.Pending == 2 && len(o.InFlight) > 0
	})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	id := f.unit.metricID()
	if o := f.env.Status.Snapshot().Offerings[0]; o.Pending != 0 || len(o.InFlight) != 0 {
		t.Fatalf("after the pass: pending %d, in flight %+v", o.Pending, o.InFlight)
	}
	if v := testutil.ToFloat64(f.env.Metrics.OrdersPending.WithLabelValues(id)); v != 0 {
		t.Fatalf("pending gauge %v after the pass", v)
	}
	up := f.world.UpdateOrder(resourceOf[a.UUID], map[string]float64{"cpu": 3})
	term := f.world.TerminateOrder(resourceOf[b.UUID])
	resourceOf[up.UUID], resourceOf[term.UUID] = resourceOf[a.UUID], resourceOf[b.UUID]
	f.run(orders)
	for _, o := range []string{a.UUID, b.UUID, up.UUID, term.UUID} {
		if got := f.order(o); got.State != waldursim.OrderDone {
			t.Fatalf("order %s: %s %s", o, got.State, got.ErrorMessage)
		}
	}
	checkOrderLines(t, logs.TakeAll(), resourceOf)
	f.sim.RemoveProjectMember(f.world.Project.UUID, f.world.Users[0].UUID) // the pass removes them from resource a
	f.run(&Membership{Env: f.env})
	lines := logs.All()
	if len(lines) == 0 {
		t.Fatal("the membership pass logged nothing in the backend")
	}
	for _, e := range lines {
		if fields := e.ContextMap(); fields[backends.ResourceUUIDField] != resourceOf[a.UUID] {
			t.Errorf("membership line %q lacks the resource: %v", e.Message, fields)
		}
	}
}
