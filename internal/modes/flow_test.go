package modes

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/inmemory"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
	"github.com/waldur/site-agent/internal/telemetry"
	wc "github.com/waldur/site-agent/internal/waldurclient"
)

// flow is an in-process agent (one unit) against the simulator over loopback.
type flow struct {
	t     testing.TB
	world *scenario.World
	sim   *waldursim.Server
	be    *inmemory.Backend
	unit  *Unit
	env   *Env
	now   time.Time
}

func newFlow(t testing.TB, simOpts waldursim.Options, settings inmemory.Settings) *flow {
	t.Helper()
	f := &flow{t: t, now: time.Now()}
	simOpts.Token = scenario.Token
	simOpts.Now = func() time.Time { return f.now } // Waldur and the agent share one clock
	sim := waldursim.New(simOpts)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { sim.AssertNoViolations(t) })
	w := scenario.New(sim, scenario.Options{Users: 2})
	cfg, _, err := config.Parse("t.yaml", []byte(w.Config(srv.URL)), config.Options{Environ: func() []string { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	off := cfg.Offerings[0]
	client, err := wc.New(wc.Options{BaseURL: off.APIURL, Token: secret.New(scenario.Token),
		Retry: wc.RetryPolicy{Max: 2, WaitMin: time.Millisecond, WaitMax: 2 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	be := inmemory.NewBackend(settings, off.Components, nil)
	f.world, f.sim, f.be = w, sim, be
	f.env = &Env{Mode: "test", Location: time.UTC, ReportingPeriods: 2, ExposeDetails: true, Concurrency: 4,
		Metrics: telemetry.NewMetrics(), Log: zap.NewNop(), Now: func() time.Time { return f.now }}
	f.unit = &Unit{Offering: off, Waldur: client, Backend: backends.RolesOf("inmemory", be), Log: zap.NewNop()}
	return f
}

func (f *flow) run(m Mode) {
	f.t.Helper()
	if err := m.RunOnce(context.Background(), f.unit); err != nil {
		f.t.Fatalf("%s: %v", m.Name(), err)
	}
}

func (f *flow) order(uuid string) waldursim.Order {
	o, _ := f.sim.Order(uuid)
	return o
}

func TestRestoreRecreatesMissingObjectWithSameID(t *testing.T) {
	f := newFlow(t, waldursim.Options{}, inmemory.Settings{})
	res := f.sim.AddResource(waldursim.Resource{Name: "old", OfferingUUID: f.world.Offering.UUID, ProjectUUID: f.world.Project.UUID,
		BackendID: "phys_old", Limits: map[string]float64{"cpu": 3}, State: waldursim.ResourceOK})
	o := f.sim.AddOrder(waldursim.Order{Type: waldursim.OrderRestore, ResourceUUID: res.UUID})
	f.run(&Orders{Env: f.env})
	if got := f.order(o.UUID); got.State != waldursim.OrderDone {
		t.Fatalf("restore: %s %s", got.State, got.ErrorMessage)
	}
	objs, _ := f.be.Objects()
	if len(objs) != 1 || objs[0].ID != "phys_old" {
		t.Fatalf("objects %+v", objs)
	}
}

func TestUpdateWithoutLimitsUsesPlanQuotas(t *testing.T) {
	f := newFlow(t, waldursim.Options{}, inmemory.Settings{})
	c := f.world.CreateOrder("planned", map[string]float64{"cpu": 1})
	f.run(&Orders{Env: f.env})
	up := f.sim.AddOrder(waldursim.Order{Type: waldursim.OrderUpdate, ResourceUUID: f.order(c.UUID).ResourceUUID, PlanUUID: f.world.Plan.UUID})
	f.run(&Orders{Env: f.env})
	if got := f.order(up.UUID); got.State != waldursim.OrderDone {
		t.Fatalf("update: %s %s", got.State, got.ErrorMessage)
	}
	objs, _ := f.be.Objects()
	if objs[0].Limits["cpu"] != 4 || objs[0].Limits["ram"] != 16 {
		t.Fatalf("plan quotas not applied: %v", objs[0].Limits)
	}
}

func TestTerminateOfNeverCreatedResourceIsDone(t *testing.T) {
	f := newFlow(t, waldursim.Options{}, inmemory.Settings{})
	res := f.sim.AddResource(waldursim.Resource{Name: "ghost", OfferingUUID: f.world.Offering.UUID, ProjectUUID: f.world.Project.UUID})
	o := f.world.TerminateOrder(res.UUID)
	f.run(&Orders{Env: f.env})
	if got := f.order(o.UUID); got.State != waldursim.OrderDone {
		t.Fatalf("%s %s", got.State, got.ErrorMessage)
	}
}

func TestLostResponsesToApproveAndDoneAreRecognised(t *testing.T) {
	f := newFlow(t, waldursim.Options{}, inmemory.Settings{})
	o := f.world.CreateOrder("lossy", map[string]float64{"cpu": 1})
	// Every attempt at approve and set_state_done applies but its answer is lost.
	f.sim.SetFaults(waldursim.Faults{Rate: 1, Kinds: []waldursim.FaultKind{waldursim.FaultLoseResponse},
		Operations: []string{"marketplace_orders_approve_by_provider", "marketplace_orders_set_state_done"}})
	f.run(&Orders{Env: f.env})
	if got := f.order(o.UUID); got.State != waldursim.OrderDone {
		t.Fatalf("state %s: a lost answer must not stop the order", got.State)
	}
	objs, _ := f.be.Objects()
	if len(objs) != 1 {
		t.Fatalf("%d objects", len(objs))
	}
}

// deferring is a backend evaluator that keeps orders waiting.
type deferring struct{ backends.Provisioner }

func (deferring) Evaluate(context.Context, backends.OrderReview) (backends.Decision, string, error) {
	return backends.Defer, "capacity check pending", nil
}

func TestDeferredOrderStaysPending(t *testing.T) {
	f := newFlow(t, waldursim.Options{}, inmemory.Settings{})
	f.unit.Backend.Evaluator = deferring{}
	o := f.world.CreateOrder("later", map[string]float64{"cpu": 1})
	f.run(&Orders{Env: f.env})
	if got := f.order(o.UUID); got.State != waldursim.OrderPendingProvider {
		t.Fatalf("state %s", got.State)
	}
}

func TestReportPastPeriodBackfillRefusalIsSkipped(t *testing.T) {
	f := newFlow(t, waldursim.Options{}, inmemory.Settings{Usage: map[string]float64{"storage": 7}})
	o := f.world.CreateOrder("history", map[string]float64{"cpu": 1})
	f.run(&Orders{Env: f.env})
	res, _ := f.sim.Resource(f.order(o.UUID).ResourceUUID)
	// A backend with history: both periods report; Waldur refuses the past one for non-staff.
	f.unit.Backend.Usage = fixedUsage{id: res.BackendID}
	f.run(&Report{Env: f.env})
	var periods []string
	for _, u := range f.sim.ComponentUsages(res.UUID) {
		periods = append(periods, u.BillingPeriod)
	}
	if len(periods) != 1 || !strings.HasPrefix(periods[0], f.now.Format("2006-01")) {
		t.Fatalf("usage periods %v: only the current month may be stored", periods)
	}
}

type fixedUsage struct{ id string }

func (u fixedUsage) Usage(_ context.Context, _ []backends.Resource, _ backends.Period, _ bool) (map[string]backends.Usage, error) {
	return map[string]backends.Usage{u.id: {Total: backends.Quantities{"storage": 5}}}, nil
}

// monthFlip moves the clock into the next month while usage is measured.
type monthFlip struct {
	f *flow
	fixedUsage
}

func (m monthFlip) Usage(ctx context.Context, rs []backends.Resource, p backends.Period, cur bool) (map[string]backends.Usage, error) {
	if cur {
		m.f.now = m.f.now.AddDate(0, 1, 0)
	}
	return m.fixedUsage.Usage(ctx, rs, p, cur)
}

func TestMonthBoundaryDuringMeasurementSkipsTheResource(t *testing.T) {
	f := newFlow(t, waldursim.Options{Staff: true}, inmemory.Settings{})
	o := f.world.CreateOrder("boundary", map[string]float64{"cpu": 1})
	f.run(&Orders{Env: f.env})
	res, _ := f.sim.Resource(f.order(o.UUID).ResourceUUID)
	f.env.ReportingPeriods = 1
	f.unit.Backend.Usage = monthFlip{f: f, fixedUsage: fixedUsage{id: res.BackendID}}
	f.run(&Report{Env: f.env})
	if n := len(f.sim.ComponentUsages(res.UUID)); n != 0 {
		t.Fatalf("%d usage records written across a month boundary", n)
	}
}

func TestReportDateUsesConfiguredTimezone(t *testing.T) {
	f := newFlow(t, waldursim.Options{}, inmemory.Settings{Usage: map[string]float64{"storage": 1}})
	tallinn, err := time.LoadLocation("Europe/Tallinn")
	if err != nil {
		t.Skip("no tzdata")
	}
	f.env.Location = tallinn
	f.env.ReportingPeriods = 1
	// 23:30 UTC on the last day of a month is already the next month in Tallinn, but not yet
	// in Waldur (UTC): the April report waits; half an hour later it is booked into April.
	f.now = time.Date(2026, time.March, 31, 23, 30, 0, 0, time.UTC)
	o := f.world.CreateOrder("tz", map[string]float64{"cpu": 1})
	f.run(&Orders{Env: f.env})
	res, _ := f.sim.Resource(f.order(o.UUID).ResourceUUID)
	f.run(&Report{Env: f.env})
	if us := f.sim.ComponentUsages(res.UUID); len(us) != 0 {
		t.Fatalf("reported before Waldur's month began: %+v", us)
	}
	f.now = time.Date(2026, time.April, 1, 0, 0, 30, 0, time.UTC)
	f.run(&Report{Env: f.env})
	us := f.sim.ComponentUsages(res.UUID)
	if len(us) != 1 || us[0].BillingPeriod != "2026-04-01" {
		t.Fatalf("usages %+v, want the April period", us)
	}
}

func TestServiceAndCourseAccountsJoinMembership(t *testing.T) {
	f := newFlow(t, waldursim.Options{}, inmemory.Settings{})
	o := f.world.CreateOrder("shared", map[string]float64{"cpu": 1})
	f.run(&Orders{Env: f.env})
	p := f.world.Project.UUID
	f.sim.AddServiceAccount(waldursim.ServiceAccount{ProjectUUID: p, Username: "svc-ci", State: "OK"})
	f.sim.AddServiceAccount(waldursim.ServiceAccount{ProjectUUID: p, Username: "svc-old", State: "Closed"})
	f.sim.AddCourseAccount(waldursim.CourseAccount{ProjectUUID: p, Username: "course-x", State: "Erred"})
	res, _ := f.sim.Resource(f.order(o.UUID).ResourceUUID)
	for _, name := range []string{"svc-old", "course-x"} { // present on the backend already
		if err := f.be.AddMembers(context.Background(), backends.Resource{BackendID: res.BackendID}, []backends.Member{{Username: name}}); err != nil {
			t.Fatal(err)
		}
	}
	f.run(&Membership{Env: f.env})
	objs, _ := f.be.Objects()
	got := strings.Join(objs[0].Members, ",")
	if got != "course-x,phys_alice,phys_bob,svc-ci" {
		t.Fatalf("members %s: OK accounts added, Closed removed, Erred left alone", got)
	}
	// Account listing fails: nobody is removed this pass.
	f.sim.SetFaults(waldursim.Faults{Rate: 1, Operations: []string{"marketplace_provider_offerings_list_project_service_accounts_list"}})
	f.sim.RemoveProjectMember(p, f.world.Users[0].UUID)
	f.run(&Membership{Env: f.env})
	objs, _ = f.be.Objects()
	if got := strings.Join(objs[0].Members, ","); !strings.Contains(got, "phys_alice") {
		t.Fatalf("members %s: removals must wait while the account lists are unknown", got)
	}
	f.sim.SetFaults(waldursim.Faults{})
	f.run(&Membership{Env: f.env})
	objs, _ = f.be.Objects()
	if got := strings.Join(objs[0].Members, ","); strings.Contains(got, "phys_alice") {
		t.Fatalf("members %s: alice left the project", got)
	}
}

// gauge reports falling usage, as a current-allocation backend does.
type gauge struct {
	fixedUsage
	amount float64
}

func (g gauge) Usage(context.Context, []backends.Resource, backends.Period, bool) (map[string]backends.Usage, error) {
	return map[string]backends.Usage{g.id: {Total: backends.Quantities{"storage": g.amount}}}, nil
}

func TestGaugeUsageMayDecrease(t *testing.T) {
	f := newFlow(t, waldursim.Options{}, inmemory.Settings{})
	o := f.world.CreateOrder("gauge", map[string]float64{"cpu": 1})
	f.run(&Orders{Env: f.env})
	res, _ := f.sim.Resource(f.order(o.UUID).ResourceUUID)
	f.env.ReportingPeriods = 1
	report := func(amount float64, isGauge bool) float64 {
		f.unit.Backend.Usage = gauge{fixedUsage{id: res.BackendID}, amount}
		f.unit.Backend.UsageIsGauge = isGauge
		f.run(&Report{Env: f.env})
		return f.sim.ComponentUsages(res.UUID)[0].Amount
	}
	if got := report(8, false); got != 8 {
		t.Fatalf("first report %v", got)
	}
	if got := report(3, false); got != 8 {
		t.Fatalf("a running total must not decrease: %v", got)
	}
	if got := report(3, true); got != 3 {
		t.Fatalf("a gauge may decrease: %v", got)
	}
}

func TestRecreateUnderNewIDIsRecorded(t *testing.T) {
	f := newFlow(t, waldursim.Options{}, inmemory.Settings{})
	res := f.sim.AddResource(waldursim.Resource{Name: "moved", OfferingUUID: f.world.Offering.UUID, ProjectUUID: f.world.Project.UUID,
		BackendID: "old-id", State: waldursim.ResourceOK})
	f.unit.Backend.Provisioner = renaming{f.unit.Backend.Provisioner}
	o := f.sim.AddOrder(waldursim.Order{Type: waldursim.OrderRestore, ResourceUUID: res.UUID})
	f.run(&Orders{Env: f.env})
	got, _ := f.sim.Resource(res.UUID)
	if f.order(o.UUID).State != waldursim.OrderDone || got.BackendID != "new-id" {
		t.Fatalf("order %s, backend id %q", f.order(o.UUID).State, got.BackendID)
	}
}

// renaming is a provisioner whose upstream assigns ids (like Rancher's project ids).
type renaming struct{ backends.Provisioner }

func (r renaming) Create(ctx context.Context, req backends.CreateRequest) (backends.Info, error) {
	req.Name, req.Resource.BackendID = "new-id", "" // upstream picks the id
	return r.Provisioner.Create(ctx, req)
}

// halfMade creates the object, then fails permanently, returning the id it made.
type halfMade struct{ backends.Provisioner }

func (h halfMade) Create(ctx context.Context, req backends.CreateRequest) (backends.Info, error) {
	info, err := h.Provisioner.Create(ctx, req)
	if err != nil {
		return info, err
	}
	return info, failure.Errorf("network quota leaves no room for the tenant's router")
}

func TestHalfMadeResourceIsRecordedAndCleanedUpByTerminate(t *testing.T) {
	f := newFlow(t, waldursim.Options{}, inmemory.Settings{})
	real := f.unit.Backend.Provisioner
	f.unit.Backend.Provisioner = halfMade{real}
	o := f.world.CreateOrder("partial", map[string]float64{"cpu": 1})
	f.run(&Orders{Env: f.env})
	got := f.order(o.UUID)
	res, _ := f.sim.Resource(got.ResourceUUID)
	if got.State != waldursim.OrderErred || res.BackendID == "" {
		t.Fatalf("order %s, backend id %q: the half-made object must be recorded", got.State, res.BackendID)
	}
	f.unit.Backend.Provisioner = real
	term := f.world.TerminateOrder(res.UUID)
	f.run(&Orders{Env: f.env})
	if objs, _ := f.be.Objects(); f.order(term.UUID).State != waldursim.OrderDone || len(objs) != 0 {
		t.Fatalf("terminate %s, %d objects left", f.order(term.UUID).State, len(objs))
	}
}
