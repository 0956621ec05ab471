package e2e

import (
	"testing"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

func TestReportUsageIdempotentWithPerUserShares(t *testing.T) {
	e := newEnv(t, waldursim.Options{}, "usage_fraction: 0.5", "usage: {storage: 10.006, gpu: 3}", "per_user_usage: true")
	o := e.world.CreateOrder("measured", map[string]float64{"cpu": 4, "ram": 16})
	e.once("order_process")
	res := resourceOf(t, e, o)
	e.once("report")

	got := map[string]waldursim.ComponentUsage{}
	for _, u := range e.sim.ComponentUsages(res.UUID) {
		got[u.Type] = u
	}
	want := map[string]float64{"cpu": 2, "ram": 8, "storage": 10.01}
	if len(got) != len(want) {
		t.Fatalf("usage records %v, want %v (gpu is not an offering component and must be dropped)", got, want)
	}
	for typ, amount := range want {
		u := got[typ]
		if u.Amount != amount {
			t.Errorf("%s = %v, want %v", typ, u.Amount, amount)
		}
		if len(u.UserUsages) != 3 {
			t.Errorf("%s: %d per-user shares, want 3", typ, len(u.UserUsages))
		}
	}
	if got["cpu"].UserUsages[0].Usage != 0.67 {
		t.Errorf("per-user cpu share %v, want 0.67", got["cpu"].UserUsages[0].Usage)
	}

	e.sim.ResetCalls()
	e.once("report")
	calls := e.sim.Calls()
	if calls["marketplace_component_usages_set_usage"] != 0 || calls["marketplace_component_usages_set_user_usages"] != 0 {
		t.Fatalf("an unchanged report must not be re-sent: %v", calls)
	}
}

func TestReportRefusesDecreasingUsage(t *testing.T) {
	e := newEnv(t, waldursim.Options{}, "usage: {storage: 5}")
	o := e.world.CreateOrder("shrinking", map[string]float64{"cpu": 1})
	e.once("order_process")
	res := resourceOf(t, e, o)
	e.sim.AddComponentUsage(waldursim.ComponentUsage{ResourceUUID: res.UUID, Type: "storage", Amount: 9})
	e.once("report")
	for _, u := range e.sim.ComponentUsages(res.UUID) {
		if u.Type == "storage" && u.Amount != 9 {
			t.Fatalf("decreasing usage overwrote Waldur's record: %v", u.Amount)
		}
	}
}
