package usage

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/waldur/site-agent/internal/backends"
)

var comps = backends.Components{
	{Name: "cpu", UnitFactor: 60000},
	{Name: "mem", UnitFactor: 1024, UnitFactorReporting: 2048},
	{Name: "gpu", UnitFactor: 1},
}

func TestConversions(t *testing.T) {
	waldur := backends.Quantities{"cpu": 2, "mem": 3, "gpu": 1, "other": 7}
	back := LimitsToBackend(waldur, comps)
	want := backends.Quantities{"cpu": 120000, "mem": 3072, "gpu": 1, "other": 7}
	if d := cmp.Diff(want, back); d != "" {
		t.Fatalf("to backend (-want +got):\n%s", d)
	}
	if d := cmp.Diff(waldur, LimitsToWaldur(back, comps)); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
	got := UsageToWaldur(backends.Quantities{"cpu": 90000, "mem": 1000, "gpu": 0.333}, comps)
	if d := cmp.Diff(backends.Quantities{"cpu": 1.5, "mem": 0.49, "gpu": 0.33}, got); d != "" {
		t.Fatalf("usage (-want +got):\n%s", d)
	}
	if LimitsToBackend(nil, comps) != nil || LimitsToWaldur(nil, comps) != nil {
		t.Fatal("nil should stay nil")
	}
}

func TestRoundAndClose(t *testing.T) {
	cases := []struct {
		in, want float64
	}{{1.005, 1}, {-1.005, -1}, {2.344, 2.34}, {2.345001, 2.35}, {0.125, 0.12}, {0.375, 0.38}, {0, 0}, {1e6 + 0.125, 1e6 + 0.12}}
	for _, c := range cases {
		if got := Round2(c.in); got != c.want {
			t.Errorf("Round2(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if Amount(3) != "3.00" || Amount(0.1+0.2) != "0.30" {
		t.Error("Amount format wrong")
	}
	if !Close(1.0, 1.0000001) || Close(1.0, 1.01) || !Close(1e12, 1e12+1) {
		t.Error("Close tolerance wrong")
	}
	if !SameQuantities(backends.Quantities{"a": 1}, backends.Quantities{"a": 1.0000001}) ||
		SameQuantities(backends.Quantities{"a": 1}, backends.Quantities{"a": 1, "b": 0}) {
		t.Error("SameQuantities wrong")
	}
}

func TestPeriods(t *testing.T) {
	now := time.Date(2026, time.January, 15, 10, 0, 0, 0, time.UTC)
	got := Periods(now, 3)
	want := []backends.Period{{Year: 2025, Month: 11}, {Year: 2025, Month: 12}, {Year: 2026, Month: 1}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatal(d)
	}
	if got := ReportDate(want[2]); got != "2026-01-01T00:00:00Z" {
		t.Errorf("ReportDate = %s", got)
	}
	if Started(want[2], time.Date(2025, 12, 31, 23, 0, 0, 0, time.UTC)) || !Started(want[2], time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Error("Started wrong")
	}
	if got := BillingPeriod(want[0]); got != "2025-11-01" {
		t.Errorf("BillingPeriod = %s", got)
	}
}
