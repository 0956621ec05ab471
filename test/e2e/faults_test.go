package e2e

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// With 30% of Waldur requests failing in every way (5xx, 429, resets, lost responses), every
// order still ends done, none erred, and the backend holds exactly one object per order.
func TestThirtyPercentWaldurFaults(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	const n = 40
	for i := 0; i < n; i++ {
		e.world.CreateOrder(fmt.Sprintf("f-%02d", i), map[string]float64{"cpu": 1})
	}
	e.sim.SetFaults(waldursim.Faults{Rate: 0.3, Seed: 42, Kinds: []waldursim.FaultKind{
		waldursim.FaultStatus500, waldursim.FaultStatus502, waldursim.FaultStatus503, waldursim.FaultStatus429,
		waldursim.FaultReset, waldursim.FaultLoseResponse}})
	p := e.start("-m", "order_process", "-c", e.config, "--period", "200ms")
	waitFor(t, 90*time.Second, "all orders done", func() bool {
		s := e.orderStates()
		if s[waldursim.OrderErred] > 0 {
			t.Fatalf("an order erred under transient faults: %v\n%s", s, p.out)
		}
		return s[waldursim.OrderDone] == n
	})
	if len(e.sim.FaultLog()) == 0 {
		t.Fatal("no faults were injected")
	}
	assertOneCreatePerObject(t, e, n)
}

// A crash between creating the backend object and recording its id in Waldur: the next run
// adopts the object instead of creating a second one.
func TestLostBackendIDIsAdoptedNotDuplicated(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	o := e.world.CreateOrder("adopt-me", map[string]float64{"cpu": 2})
	e.sim.SetFaults(waldursim.Faults{Rate: 1, Kinds: []waldursim.FaultKind{waldursim.FaultStatus503},
		Operations: []string{"marketplace_provider_resources_set_backend_id"}})
	e.once("order_process")
	e.sim.SetFaults(waldursim.Faults{})
	if got, _ := e.sim.Order(o.UUID); got.State != waldursim.OrderExecuting {
		t.Fatalf("order %s, want executing after the lost set_backend_id", got.State)
	}
	e.once("order_process")
	if got, _ := e.sim.Order(o.UUID); got.State != waldursim.OrderDone {
		t.Fatalf("order %s, want done", got.State)
	}
	assertOneCreatePerObject(t, e, 1)
}

// The agent killed (SIGKILL) in the middle of a backlog and restarted finishes every order
// without duplicate backend objects.
func TestKilledMidBacklogRestartsCleanly(t *testing.T) {
	e := newEnv(t, waldursim.Options{}, "latency: 15ms")
	const n = 120
	for i := 0; i < n; i++ {
		e.world.CreateOrder(fmt.Sprintf("k-%03d", i), map[string]float64{"cpu": 1})
	}
	p := e.start("-m", "order_process", "-c", e.config, "--period", "200ms")
	waitFor(t, 60*time.Second, "a third of the backlog", func() bool { return len(e.objects()) >= n/3 })
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	done := e.orderStates()[waldursim.OrderDone]
	if done == n {
		t.Fatal("the kill came too late to test anything")
	}
	e.start("-m", "order_process", "-c", e.config, "--period", "200ms")
	waitFor(t, 90*time.Second, "all orders done after restart", func() bool { return e.orderStates()[waldursim.OrderDone] == n })
	if s := e.orderStates(); s[waldursim.OrderErred] > 0 {
		t.Fatalf("orders erred: %v", s)
	}
	assertOneCreatePerObject(t, e, n)
	t.Logf("killed with %d/%d orders done", done, n)
}

func assertOneCreatePerObject(t *testing.T, e *env, n int) {
	t.Helper()
	creates := map[string]int{}
	for _, op := range e.ops() {
		if op.Op == "create" {
			creates[op.ID]++
		}
	}
	for id, c := range creates {
		if c != 1 {
			t.Errorf("%s created %d times", id, c)
		}
	}
	if objs := e.objects(); len(objs) != n || len(creates) != n {
		t.Fatalf("%d objects, %d distinct creates; want %d", len(objs), len(creates), n)
	}
	for _, r := range e.sim.Resources() {
		if r.State == waldursim.ResourceOK && r.BackendID == "" {
			t.Errorf("resource %s is OK without a backend id", r.Name)
		}
	}
}
