package waldursim

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// orderCase seeds one order, posts one action and checks order and resource afterwards.
type orderCase struct {
	name          string
	typ, state    string // order type and seeded state
	action        string // path suffix after the order URL
	body          any
	wantStatus    int
	wantOrder     string // order state afterwards
	wantResource  string // resource state afterwards
	wantLimits    map[string]float64
	wantDetailSub string // substring of the error detail
}

func TestOrderTransitions(t *testing.T) {
	tests := []orderCase{
		{name: "approve pending create", typ: OrderCreate, state: OrderPendingProvider, action: "approve_by_provider",
			body: map[string]any{}, wantStatus: 200, wantOrder: OrderExecuting, wantResource: ResourceCreating},
		{name: "approve pending update", typ: OrderUpdate, state: OrderPendingProvider, action: "approve_by_provider",
			wantStatus: 200, wantOrder: OrderExecuting, wantResource: ResourceUpdating},
		{name: "approve pending terminate", typ: OrderTerminate, state: OrderPendingProvider, action: "approve_by_provider",
			wantStatus: 200, wantOrder: OrderExecuting, wantResource: ResourceTerminating},
		{name: "approve executing", typ: OrderCreate, state: OrderExecuting, action: "approve_by_provider",
			wantStatus: 409, wantOrder: OrderExecuting, wantResource: ResourceCreating, wantDetailSub: "pending-provider"},
		{name: "approve done", typ: OrderUpdate, state: OrderDone, action: "approve_by_provider",
			wantStatus: 409, wantOrder: OrderDone, wantResource: ResourceOK},
		{name: "reject pending create", typ: OrderCreate, state: OrderPendingProvider, action: "reject_by_provider",
			body: map[string]any{"provider_rejection_comment": "no"}, wantStatus: 200, wantOrder: OrderRejected, wantResource: ResourceTerminated},
		{name: "reject pending update", typ: OrderUpdate, state: OrderPendingProvider, action: "reject_by_provider",
			wantStatus: 200, wantOrder: OrderRejected, wantResource: ResourceOK},
		{name: "reject executing", typ: OrderCreate, state: OrderExecuting, action: "reject_by_provider",
			wantStatus: 409, wantOrder: OrderExecuting, wantResource: ResourceCreating},
		{name: "done create", typ: OrderCreate, state: OrderExecuting, action: "set_state_done",
			wantStatus: 200, wantOrder: OrderDone, wantResource: ResourceOK, wantLimits: map[string]float64{"cpu": 7}},
		{name: "done update applies order limits", typ: OrderUpdate, state: OrderExecuting, action: "set_state_done",
			wantStatus: 200, wantOrder: OrderDone, wantResource: ResourceOK, wantLimits: map[string]float64{"cpu": 7}},
		{name: "done terminate", typ: OrderTerminate, state: OrderExecuting, action: "set_state_done",
			wantStatus: 200, wantOrder: OrderDone, wantResource: ResourceTerminated},
		{name: "done restore", typ: OrderRestore, state: OrderExecuting, action: "set_state_done",
			wantStatus: 200, wantOrder: OrderDone, wantResource: ResourceOK},
		{name: "done pending", typ: OrderCreate, state: OrderPendingProvider, action: "set_state_done",
			wantStatus: 409, wantOrder: OrderPendingProvider, wantResource: ResourceCreating, wantDetailSub: "executing"},
		{name: "done twice", typ: OrderUpdate, state: OrderDone, action: "set_state_done",
			wantStatus: 409, wantOrder: OrderDone, wantResource: ResourceOK},
		{name: "erred create", typ: OrderCreate, state: OrderExecuting, action: "set_state_erred",
			body: map[string]any{"error_message": "boom", "error_traceback": "tb"}, wantStatus: 200, wantOrder: OrderErred, wantResource: ResourceErred},
		{name: "erred update", typ: OrderUpdate, state: OrderExecuting, action: "set_state_erred",
			wantStatus: 200, wantOrder: OrderErred, wantResource: ResourceErred},
		{name: "erred terminate keeps resource OK", typ: OrderTerminate, state: OrderExecuting, action: "set_state_erred",
			wantStatus: 200, wantOrder: OrderErred, wantResource: ResourceOK},
		{name: "erred pending provider", typ: OrderCreate, state: OrderPendingProvider, action: "set_state_erred",
			wantStatus: 200, wantOrder: OrderErred, wantResource: ResourceErred},
		{name: "erred after done", typ: OrderCreate, state: OrderDone, action: "set_state_erred",
			wantStatus: 409, wantOrder: OrderDone, wantResource: ResourceCreating},
		{name: "erred rejected", typ: OrderUpdate, state: OrderRejected, action: "set_state_erred",
			wantStatus: 409, wantOrder: OrderRejected, wantResource: ResourceOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runOrderCase(t, tt) })
	}
}

func runOrderCase(t *testing.T, tt orderCase) {
	w := newWorld(t, Options{})
	seed := Order{Type: tt.typ, State: tt.state, OfferingUUID: offeringID, PlanUUID: planID,
		Limits: map[string]float64{"cpu": 7}}
	switch tt.typ {
	case OrderCreate:
		seed.ProjectUUID, seed.Attributes = projectID, map[string]any{"name": "Fresh"}
	case OrderRestore:
		w.sim.AddResource(Resource{UUID: "0000000000004000800000000000abcd", Name: "Gone", OfferingUUID: offeringID,
			ProjectUUID: projectID, PlanUUID: planID, State: ResourceTerminated})
		seed.ResourceUUID = "0000000000004000800000000000abcd"
	default:
		seed.ResourceUUID = w.resource.UUID
	}
	o := w.sim.AddOrder(seed)
	r := w.call(t, "POST", "/api/marketplace-orders/"+o.UUID+"/"+tt.action+"/", tt.body)
	wantStatus(t, r, tt.wantStatus)
	if tt.wantDetailSub != "" && !strings.Contains(string(r.raw), tt.wantDetailSub) {
		t.Errorf("body %s does not mention %q", r.raw, tt.wantDetailSub)
	}
	got, _ := w.sim.Order(o.UUID)
	res, _ := w.sim.Resource(got.ResourceUUID)
	if got.State != tt.wantOrder || res.State != tt.wantResource {
		t.Errorf("order %s / resource %s, want %s / %s", got.State, res.State, tt.wantOrder, tt.wantResource)
	}
	if tt.wantLimits != nil {
		if diff := cmp.Diff(tt.wantLimits, res.Limits); diff != "" {
			t.Errorf("resource limits (-want +got):\n%s", diff)
		}
	}
	if body, isMap := tt.body.(map[string]any); isMap && tt.wantStatus == 200 {
		if msg, ok := body["error_message"]; ok && got.ErrorMessage != msg {
			t.Errorf("error_message %q, want %q", got.ErrorMessage, msg)
		}
		if c, ok := body["provider_rejection_comment"]; ok && got.ProviderRejectionComment != c {
			t.Errorf("rejection comment %q, want %q", got.ProviderRejectionComment, c)
		}
	}
	w.sim.AssertNoViolations(t)
}

func TestCreateOrderMakesResourceAndSeesItThrough(t *testing.T) {
	w := newWorld(t, Options{})
	o := w.sim.AddOrder(Order{OfferingUUID: offeringID, ProjectUUID: projectID, PlanUUID: planID,
		Attributes: map[string]any{"name": "My Alloc"}, Limits: map[string]float64{"cpu": 3}})
	res, ok := w.sim.Resource(o.ResourceUUID)
	if !ok || res.State != ResourceCreating || res.Name != "My Alloc" || res.Slug != "my-alloc" {
		t.Fatalf("resource %+v", res)
	}
	got := w.call(t, "GET", "/api/marketplace-orders/"+o.UUID+"/", nil).object(t)
	for key, want := range map[string]any{
		"state": OrderPendingProvider, "type": OrderCreate, "resource_name": "My Alloc",
		"marketplace_resource_uuid": o.ResourceUUID, "project_slug": w.project.Slug, "plan_uuid": planID,
		"offering_uuid": offeringID,
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v", key, got[key], want)
		}
	}
	wantStatus(t, w.call(t, "POST", "/api/marketplace-orders/"+o.UUID+"/approve_by_provider/", nil), 200)
	wantStatus(t, w.call(t, "POST", "/api/marketplace-orders/"+o.UUID+"/set_backend_id/", map[string]any{"backend_id": "remote-1"}), 200)
	wantStatus(t, w.call(t, "POST", "/api/marketplace-orders/"+o.UUID+"/set_state_done/", nil), 200)
	final, _ := w.sim.Order(o.UUID)
	if final.State != OrderDone || final.BackendID != "remote-1" {
		t.Errorf("order %+v", final)
	}
	w.sim.AssertNoViolations(t)
}

func TestModifiedMovesOnEveryChange(t *testing.T) {
	var mu sync.Mutex
	clock := testNow
	tick := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}
	w := newWorld(t, Options{Now: tick})
	o := w.sim.AddOrder(Order{Type: OrderUpdate, ResourceUUID: w.resource.UUID, Limits: map[string]float64{"cpu": 1}})
	last := o.Modified
	for _, action := range []string{"approve_by_provider", "set_backend_id", "set_state_done"} {
		var body any
		if action == "set_backend_id" {
			body = map[string]any{"backend_id": "b"}
		}
		wantStatus(t, w.call(t, "POST", "/api/marketplace-orders/"+o.UUID+"/"+action+"/", body), 200)
		got, _ := w.sim.Order(o.UUID)
		if !got.Modified.After(last) {
			t.Errorf("%s: modified %v did not move past %v", action, got.Modified, last)
		}
		last = got.Modified
	}
	res, _ := w.sim.Resource(w.resource.UUID)
	if !res.Modified.After(w.resource.Modified) {
		t.Error("resource modified did not move")
	}
}
