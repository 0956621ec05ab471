package e2e

import (
	"fmt"
	"testing"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

func TestOrdersCreateUpdateTerminate(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	small := e.world.CreateOrder("small", map[string]float64{"cpu": 2, "ram": 8})
	big := e.world.CreateOrder("big", map[string]float64{"cpu": 16, "ram": 64})
	e.once("order_process")

	for _, o := range []waldursim.Order{small, big} {
		got, _ := e.sim.Order(o.UUID)
		res, _ := e.sim.Resource(got.ResourceUUID)
		if got.State != waldursim.OrderDone || res.State != waldursim.ResourceOK || res.BackendID == "" {
			t.Fatalf("order %s: state %s, resource %s backend_id %q", o.UUID, got.State, res.State, res.BackendID)
		}
	}
	objs := e.objects()
	if len(objs) != 2 || objs[0].ID != "phys_big" || objs[0].Limits["cpu"] != 16 || objs[1].ID != "phys_small" {
		t.Fatalf("backend objects: %+v", objs)
	}
	if got := objs[1].Members; len(got) != 3 {
		t.Fatalf("team should be added at creation, got %v", got)
	}
	ids := e.sim.Identities()
	if len(ids) != 1 || len(ids[0].Services) != 1 || ids[0].Services[0].Name != "order_process" ||
		len(ids[0].Services[0].Processors) != 1 {
		t.Fatalf("agent identity not registered as expected: %+v", ids)
	}

	smallRes, _ := e.sim.Order(small.UUID)
	bigRes, _ := e.sim.Order(big.UUID)
	up := e.world.UpdateOrder(smallRes.ResourceUUID, map[string]float64{"cpu": 4, "ram": 16})
	term := e.world.TerminateOrder(bigRes.ResourceUUID)
	e.once("order_process")
	for _, o := range []waldursim.Order{up, term} {
		if got, _ := e.sim.Order(o.UUID); got.State != waldursim.OrderDone {
			t.Fatalf("%s order: %s (%s)", o.Type, got.State, got.ErrorMessage)
		}
	}
	objs = e.objects()
	if len(objs) != 1 || objs[0].ID != "phys_small" || objs[0].Limits["cpu"] != 4 || objs[0].Limits["ram"] != 16 {
		t.Fatalf("after update+terminate: %+v", objs)
	}
	if ids := e.sim.Identities(); len(ids) != 1 {
		t.Fatalf("a second run must update, not duplicate, the identity: %d identities", len(ids))
	}
}

func TestIdleCycleMakesOneRequestAfterRegistration(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	e.once("order_process") // registers (4 requests) and lists orders (1)
	e.sim.ResetCalls()
	e.once("order_process")
	// A separate --once process registers again (once per process start), so count only listing.
	if n := e.sim.Calls()["marketplace_orders_list"]; n != 1 {
		t.Fatalf("idle cycle listed orders %d times: %v", n, e.sim.Calls())
	}
}

func TestMalformedAndRejectedOrdersDoNotStopOthers(t *testing.T) {
	e := newEnv(t, waldursim.Options{}, "max_limits: {cpu: 10}")
	good := e.world.CreateOrder("good", map[string]float64{"cpu": 2})
	tooBig := e.world.CreateOrder("too-big", map[string]float64{"cpu": 100})
	negative := e.world.CreateOrder("negative", map[string]float64{"cpu": -3})
	e.once("order_process")
	want := map[string]string{good.UUID: waldursim.OrderDone, tooBig.UUID: waldursim.OrderRejected, negative.UUID: waldursim.OrderRejected}
	for id, state := range want {
		got, _ := e.sim.Order(id)
		if got.State != state {
			t.Errorf("order %s: %s, want %s", got.ResourceName, got.State, state)
		}
		if state == waldursim.OrderRejected && got.ProviderRejectionComment == "" {
			t.Errorf("order %s rejected without a reason", got.ResourceName)
		}
	}
	if n := len(e.objects()); n != 1 {
		t.Fatalf("only the good order may create a backend object, got %d", n)
	}
}

func TestPermanentBackendFailureErrsOrderWithReason(t *testing.T) {
	e := newEnv(t, waldursim.Options{}, "faults: {rate: 1, kind: permanent, operations: [create]}")
	o := e.world.CreateOrder("doomed", map[string]float64{"cpu": 1})
	e.once("order_process")
	got, _ := e.sim.Order(o.UUID)
	if got.State != waldursim.OrderErred || got.ErrorMessage != "injected permanent failure in create" {
		t.Fatalf("order %s: %q", got.State, got.ErrorMessage)
	}
	res, _ := e.sim.Resource(got.ResourceUUID)
	if res.State != waldursim.ResourceErred {
		t.Fatalf("resource state %s", res.State)
	}
}

func TestTransientBackendFailureKeepsOrderExecuting(t *testing.T) {
	e := newEnv(t, waldursim.Options{}, "faults: {rate: 1, kind: transient, operations: [create]}")
	o := e.world.CreateOrder("patient", map[string]float64{"cpu": 1})
	r := e.run("-m", "order_process", "-c", e.config, "--once")
	if r.code != 0 {
		t.Fatalf("a transient backend failure is not a failed cycle: %s", r)
	}
	got, _ := e.sim.Order(o.UUID)
	if got.State != waldursim.OrderExecuting {
		t.Fatalf("order state %s (%s), want executing", got.State, got.ErrorMessage)
	}
	e.writeConfig("state_file: " + e.state) // the backend recovers
	e.once("order_process")
	if got, _ := e.sim.Order(o.UUID); got.State != waldursim.OrderDone {
		t.Fatalf("order state %s after recovery", got.State)
	}
}

func TestBackendIDCollisionPicksNextName(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	// Another resource of the offering already holds the natural name.
	other := e.sim.AddResource(waldursim.Resource{Name: "taken", OfferingUUID: e.world.Offering.UUID,
		ProjectUUID: e.world.Project.UUID, BackendID: "phys_dup"})
	_ = other
	o := e.world.CreateOrder("dup", map[string]float64{"cpu": 1})
	e.once("order_process")
	got, _ := e.sim.Order(o.UUID)
	res, _ := e.sim.Resource(got.ResourceUUID)
	if got.State != waldursim.OrderDone || res.BackendID != "phys_dup-1" {
		t.Fatalf("state %s backend id %q, want phys_dup-1", got.State, res.BackendID)
	}
}

func TestManyOrdersAllDone(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	for i := 0; i < 60; i++ {
		e.world.CreateOrder(fmt.Sprintf("batch-%02d", i), map[string]float64{"cpu": 1, "ram": 2})
	}
	e.once("order_process")
	if s := e.orderStates(); s[waldursim.OrderDone] != 60 {
		t.Fatalf("states %v", s)
	}
	if n := len(e.objects()); n != 60 {
		t.Fatalf("%d backend objects", n)
	}
}
