package modes

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
	wc "github.com/waldur/site-agent/internal/waldurclient"
)

func TestPlanOrder(t *testing.T) {
	ok := wc.Order{Type: wc.OrderCreate, ResourceUUID: "r1", Limits: wc.Quantities{"cpu": 2}}
	with := func(f func(*wc.Order)) wc.Order { o := ok; f(&o); return o }
	cases := []struct {
		name    string
		order   wc.Order
		state   string
		want    orderStep
		problem bool
	}{
		{"pending create is approved", ok, wc.OrderPendingProvider, stepApprove, false},
		{"executing create runs", ok, wc.OrderExecuting, stepExecute, false},
		{"done is skipped", ok, wc.OrderDone, stepSkip, false},
		{"erred is skipped", ok, wc.OrderErred, stepSkip, false},
		{"rejected is skipped", ok, wc.OrderRejected, stepSkip, false},
		{"pending-consumer is not ours", ok, "pending-consumer", stepSkip, false},
		{"canceled is skipped", ok, "canceled", stepSkip, false},
		{"restore pending approved", with(func(o *wc.Order) { o.Type = wc.OrderRestore }), wc.OrderPendingProvider, stepApprove, false},
		{"update executing", with(func(o *wc.Order) { o.Type = wc.OrderUpdate }), wc.OrderExecuting, stepExecute, false},
		{"terminate executing", with(func(o *wc.Order) { o.Type = wc.OrderTerminate; o.Limits = nil }), wc.OrderExecuting, stepExecute, false},
		{"unknown type pending is rejected", with(func(o *wc.Order) { o.Type = "Migrate" }), wc.OrderPendingProvider, stepReject, true},
		{"unknown type executing errs", with(func(o *wc.Order) { o.Type = "Migrate" }), wc.OrderExecuting, stepErr, true},
		{"no resource pending rejected", with(func(o *wc.Order) { o.ResourceUUID = "" }), wc.OrderPendingProvider, stepReject, true},
		{"negative limit executing errs", with(func(o *wc.Order) { o.Limits = wc.Quantities{"cpu": -1} }), wc.OrderExecuting, stepErr, true},
		{"undecodable pending is rejected", wc.Order{UUID: "x", Malformed: "bad limits"}, wc.OrderPendingProvider, stepReject, true},
		{"undecodable executing errs", wc.Order{UUID: "x", Malformed: "bad limits"}, wc.OrderExecuting, stepErr, true},
		{"malformed but finished is skipped", with(func(o *wc.Order) { o.Type = "" }), wc.OrderDone, stepSkip, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := c.order
			o.State = c.state
			got, problem := planOrder(o)
			if got != c.want || (problem != "") != c.problem {
				t.Fatalf("planOrder = %v %q, want %v (problem: %v)", got, problem, c.want, c.problem)
			}
		})
	}
}

func TestGroupOrdersKeepsResourceOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	orders := []wc.Order{
		{UUID: "u2", ResourceUUID: "a", Created: t0.Add(2 * time.Minute)},
		{UUID: "c1", ResourceUUID: "b", Created: t0},
		{UUID: "u1", ResourceUUID: "a", Created: t0.Add(time.Minute)},
		{UUID: "x", ResourceUUID: ""},
	}
	var got [][]string
	for _, g := range groupOrders(orders) {
		var ids []string
		for _, o := range g {
			ids = append(ids, o.UUID)
		}
		got = append(got, ids)
	}
	want := [][]string{{"u1", "u2"}, {"c1"}, {"x"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatal(d)
	}
}

func TestNameCandidates(t *testing.T) {
	got := nameCandidates("HPC_", "My-Res", "0123456789abcdef0123456789abcdef", 3)
	if d := cmp.Diff([]string{"hpc_my-res", "hpc_my-res-1", "hpc_my-res-2"}, got); d != "" {
		t.Fatal(d)
	}
	if got := nameCandidates("", "", "01234567-89ab-cdef-0123-456789abcdef", 1); got[0] != "resource-01234567" {
		t.Fatalf("empty slug: %v", got)
	}
}

func TestMemberDiffAndDesired(t *testing.T) {
	team := []wc.TeamMember{
		{UUID: "1", OfferingUserUsername: "alice", Role: "PROJECT.MEMBER"},
		{UUID: "2", OfferingUserUsername: ""}, // no offering account yet
		{UUID: "3", OfferingUserUsername: "carol", OfferingUserState: "Requested deletion"},
		{UUID: "4", OfferingUserUsername: "dave", OfferingUserState: "OK"},
		{UUID: "5", OfferingUserUsername: "alice"}, // duplicate username
	}
	desired := desiredMembers(team, false)
	if got := usernames(desired); !cmp.Equal(got, []string{"alice", "dave"}) {
		t.Fatalf("desired = %v", got)
	}
	if desiredMembers(team, true) != nil {
		t.Fatal("restricted resources have no members")
	}
	add, remove := memberDiff(desired, []string{"dave", "eve", "carol"})
	if !cmp.Equal(usernames(add), []string{"alice"}) || !cmp.Equal(remove, []string{"carol", "eve"}) {
		t.Fatalf("add %v remove %v", usernames(add), remove)
	}
	add, remove = memberDiff(desired, []string{"alice", "dave"})
	if len(add)+len(remove) != 0 {
		t.Fatal("nothing to do when in sync")
	}
}

func TestPlanUsage(t *testing.T) {
	known := map[string]bool{"cpu": true, "mem": true}
	rec := func(typ string, v float64) wc.ComponentUsage {
		return wc.ComponentUsage{Type: typ, Usage: wc.Number(v)}
	}
	cases := []struct {
		name     string
		amounts  backends.Quantities
		existing []wc.ComponentUsage
		allowDec bool
		want     usageVerdict
		items    []wc.UsageItem
		dropped  []string
	}{
		{"new usage is sent", backends.Quantities{"cpu": 1.234, "mem": 2}, nil, false, usageSend,
			[]wc.UsageItem{{Type: "cpu", Amount: "1.23"}, {Type: "mem", Amount: "2.00"}}, nil},
		{"same after rounding is unchanged", backends.Quantities{"cpu": 1.2349}, []wc.ComponentUsage{rec("cpu", 1.23)}, false, usageUnchanged,
			[]wc.UsageItem{{Type: "cpu", Amount: "1.23"}}, nil},
		{"growth is sent", backends.Quantities{"cpu": 2}, []wc.ComponentUsage{rec("cpu", 1)}, false, usageSend,
			[]wc.UsageItem{{Type: "cpu", Amount: "2.00"}}, nil},
		{"decrease is an anomaly", backends.Quantities{"cpu": 1}, []wc.ComponentUsage{rec("cpu", 2)}, false, usageAnomaly,
			[]wc.UsageItem{{Type: "cpu", Amount: "1.00"}}, nil},
		{"decrease allowed when declared", backends.Quantities{"cpu": 1}, []wc.ComponentUsage{rec("cpu", 2)}, true, usageSend,
			[]wc.UsageItem{{Type: "cpu", Amount: "1.00"}}, nil},
		{"duplicate records are an anomaly", backends.Quantities{"cpu": 3}, []wc.ComponentUsage{rec("cpu", 2), rec("cpu", 1)}, false, usageAnomaly,
			[]wc.UsageItem{{Type: "cpu", Amount: "3.00"}}, nil},
		{"unknown components are dropped", backends.Quantities{"gpu": 1, "cpu": 1}, nil, false, usageSend,
			[]wc.UsageItem{{Type: "cpu", Amount: "1.00"}}, []string{"gpu"}},
		{"nothing known is unchanged", backends.Quantities{"gpu": 1}, nil, false, usageUnchanged, nil, []string{"gpu"}},
		{"extra Waldur records do not force a resend", backends.Quantities{"cpu": 1}, []wc.ComponentUsage{rec("cpu", 1), rec("mem", 5)}, false, usageUnchanged,
			[]wc.UsageItem{{Type: "cpu", Amount: "1.00"}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			items, verdict, dropped, _ := planUsage(c.amounts, c.existing, known, c.allowDec)
			if verdict != c.want {
				t.Errorf("verdict = %v, want %v", verdict, c.want)
			}
			if d := cmp.Diff(c.items, items); d != "" {
				t.Errorf("items (-want +got):\n%s", d)
			}
			if d := cmp.Diff(c.dropped, dropped); d != "" {
				t.Errorf("dropped (-want +got):\n%s", d)
			}
		})
	}
}

func TestPublicError(t *testing.T) {
	hidden := &Env{ExposeDetails: false}
	shown := &Env{ExposeDetails: true}
	userErr := failure.Wrap(errTest("dial tcp 10.0.0.1:443: refused"), "Rancher project could not be created")
	if got := hidden.publicError(userErr); got != "Rancher project could not be created" {
		t.Errorf("hidden user error = %q", got)
	}
	if got := hidden.publicError(errTest("panic at foo.go:12")); got != "Internal backend error. Please contact the service provider." {
		t.Errorf("hidden internal error = %q", got)
	}
	if got := shown.publicError(userErr); got != "Rancher project could not be created: dial tcp 10.0.0.1:443: refused" {
		t.Errorf("shown = %q", got)
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }
