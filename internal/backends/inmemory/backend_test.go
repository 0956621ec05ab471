package inmemory

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/backendtest"
	"github.com/waldur/site-agent/internal/failure"
)

var testComps = backends.Components{{Name: "cpu", UnitFactor: 1}, {Name: "mem", UnitFactor: 1}}

func resource(n int) backends.Resource {
	return backends.Resource{UUID: fmt.Sprintf("%032x", n), Slug: fmt.Sprintf("res-%d", n),
		ProjectSlug: "proj", CustomerSlug: "cust", Limits: backends.Quantities{"cpu": 4, "mem": 8}}
}

func TestConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Options{
		New: func(t *testing.T) backends.Backend {
			return NewBackend(Settings{UsageFraction: 0.5}, testComps, nil)
		},
		Resource: resource,
		Members:  []string{"alice", "bob"},
	})
}

func TestConformanceWithStateFile(t *testing.T) {
	backendtest.Run(t, backendtest.Options{
		New: func(t *testing.T) backends.Backend {
			return NewBackend(Settings{StateFile: filepath.Join(t.TempDir(), "state.json")}, testComps, nil)
		},
		Resource: resource,
		Members:  []string{"alice", "bob"},
	})
}

// Two backends on one state file behave like two agent processes sharing a site.
func TestStateFileSharedBetweenInstances(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	a := NewBackend(Settings{StateFile: path}, testComps, nil)
	b := NewBackend(Settings{StateFile: path}, testComps, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			be := a
			if i%2 == 1 {
				be = b
			}
			if _, err := be.Create(ctx, backends.CreateRequest{Resource: resource(i), Name: fmt.Sprintf("r%d", i)}); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	objs, err := b.Objects()
	if err != nil || len(objs) != 20 {
		t.Fatalf("objects = %d, %v; want 20 (lost writes between processes)", len(objs), err)
	}
}

func TestUsageAndEvaluation(t *testing.T) {
	ctx := context.Background()
	be := NewBackend(Settings{Usage: map[string]float64{"cpu": 3}, UsageFraction: 0.25, PerUserUsage: true,
		MaxLimits: map[string]float64{"cpu": 10}}, testComps, nil)
	res := resource(1)
	info, err := be.Create(ctx, backends.CreateRequest{Resource: res, Name: "r1", Members: []backends.Member{{Username: "a"}, {Username: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	res.BackendID = info.BackendID
	got, err := be.Usage(ctx, []backends.Resource{res}, backends.Period{}, true)
	if err != nil {
		t.Fatal(err)
	}
	u := got["r1"]
	if u.Total["cpu"] != 3 || u.Total["mem"] != 2 || u.Users["a"]["cpu"] != 1.5 {
		t.Fatalf("usage = %+v", u)
	}
	past, _ := be.Usage(ctx, []backends.Resource{res}, backends.Period{}, false)
	if len(past) != 0 {
		t.Fatalf("past periods have no data, got %v", past)
	}
	big := res
	big.Limits = backends.Quantities{"cpu": 11}
	if dec, why, _ := be.Evaluate(ctx, backends.OrderReview{Type: "Create", Resource: big}); dec != backends.Reject || why == "" {
		t.Fatalf("want reject with reason, got %v %q", dec, why)
	}
	if dec, _, _ := be.Evaluate(ctx, backends.OrderReview{Type: "Create", Resource: res}); dec != backends.Accept {
		t.Fatal("want accept")
	}
}

func TestFaultsAreDeterministicAndTyped(t *testing.T) {
	run := func(kind string) []bool {
		be := NewBackend(Settings{Faults: Faults{Rate: 0.5, Seed: 7, Kind: kind, Operations: []string{"create"}}}, testComps, nil)
		var out []bool
		for i := 0; i < 20; i++ {
			_, err := be.Create(context.Background(), backends.CreateRequest{Resource: resource(i), Name: fmt.Sprintf("r%d", i)})
			out = append(out, err != nil)
			if err != nil && kind == "transient" && !failure.IsTransient(err) {
				t.Fatalf("transient fault not marked transient: %v", err)
			}
			var be *failure.Error
			if err != nil && kind == "permanent" && (failure.IsTransient(err) || !errors.As(err, &be)) {
				t.Fatalf("permanent fault should be a user-facing error: %v", err)
			}
		}
		return out
	}
	a, b := run("transient"), run("transient")
	fails := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("same seed gave different fault sequences")
		}
		if a[i] {
			fails++
		}
	}
	if fails == 0 || fails == 20 {
		t.Fatalf("rate 0.5 gave %d/20 failures", fails)
	}
	run("permanent")
}

func TestSettingsValidation(t *testing.T) {
	cases := map[string]map[string]any{
		"rate":     {"faults": map[string]any{"rate": 2.0}},
		"kind":     {"faults": map[string]any{"kind": "sometimes"}},
		"fraction": {"usage_fraction": -1},
		"type":     {"usage": "lots"},
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			if _, _, err := New(backends.Params{Settings: s}); err == nil {
				t.Fatal("want error")
			}
		})
	}
	_, warnings, err := New(backends.Params{Settings: map[string]any{"statefile": "x", "allocation_prefix": "a_"}})
	if err != nil || len(warnings) != 1 || warnings[0] != "backend_settings.statefile" {
		t.Fatalf("warnings = %v, err = %v", warnings, err)
	}
}
