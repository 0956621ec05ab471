package simfault

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var allKinds = []Kind{Status500, Status502, Status503, Status429, Reset, LoseResponse}

// picks sends n requests cycling through ops and returns the kinds picked ("" for none).
func picks(in *Injector, n int, ops ...string) []string {
	var out []string
	for i := range n {
		k, ok := in.Pick(ops[i%len(ops)])
		if !ok {
			out = append(out, "")
			continue
		}
		out = append(out, k.String())
	}
	return out
}

func TestKindNamesAndStatuses(t *testing.T) {
	tests := []struct {
		kind    Kind
		name    string
		status  int
		applies bool
	}{
		{Status500, "500", 500, false},
		{Status502, "502", 502, false},
		{Status503, "503", 503, false},
		{Status429, "429", 429, false},
		{Reset, "reset", 0, false},
		{LoseResponse, "lose-response", 0, true},
		{Kind(0), "unknown", 0, false},
		{Kind(99), "unknown", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.kind.String(); got != tt.name {
				t.Errorf("String() = %q, want %q", got, tt.name)
			}
			if got := tt.kind.Status(); got != tt.status {
				t.Errorf("Status() = %d, want %d", got, tt.status)
			}
			if got := tt.kind.AppliesRequest(); got != tt.applies {
				t.Errorf("AppliesRequest() = %v, want %v", got, tt.applies)
			}
		})
	}
}

func TestNothingInjectedByDefault(t *testing.T) {
	in := New(Profile{})
	if got := picks(in, 50, "a", "b"); !cmp.Equal(got, make([]string, 50)) {
		t.Errorf("faults before SetFaults: %v", got)
	}
	in.SetFaults(Config{Seed: 1}) // rate 0
	if got := picks(in, 50, "a"); !cmp.Equal(got, make([]string, 50)) {
		t.Errorf("faults at rate 0: %v", got)
	}
	if log := in.FaultLog(); len(log) != 0 {
		t.Errorf("log %v", log)
	}
}

// The sequence for a seed must never change: tests and the demo rely on it, and it is the one
// the simulators produced before they shared this package.
func TestSeededSequenceIsStable(t *testing.T) {
	in := New(Profile{})
	in.SetFaults(Config{Rate: 0.5, Seed: 42, Kinds: allKinds})
	picks(in, 16, "a", "b")
	want := []string{"a:lose-response", "a:502", "b:429", "a:503", "b:429", "a:503", "b:503", "b:500", "a:429"}
	if diff := cmp.Diff(want, in.FaultLog()); diff != "" {
		t.Errorf("fault log (-want +got):\n%s", diff)
	}
}

func TestSeededDeterminism(t *testing.T) {
	run := func(seed int64) []string {
		in := New(Profile{})
		in.SetFaults(Config{Rate: 0.3, Seed: seed, Kinds: allKinds})
		return picks(in, 400, "a", "b", "c")
	}
	a, b, c := run(7), run(7), run(8)
	if !cmp.Equal(a, b) {
		t.Error("the same seed gave different sequences")
	}
	if cmp.Equal(a, c) {
		t.Error("different seeds gave the same sequence")
	}
	seen := map[string]int{}
	for _, k := range a {
		seen[k]++
	}
	if n := 400 - seen[""]; n < 80 || n > 160 {
		t.Errorf("%d faults in 400 picks at rate 0.3", n)
	}
	for _, k := range allKinds {
		if seen[k.String()] == 0 {
			t.Errorf("kind %s never drawn: %v", k, seen)
		}
	}
}

func TestSetFaultsReseeds(t *testing.T) {
	in := New(Profile{})
	cfg := Config{Rate: 0.5, Seed: 3}
	in.SetFaults(cfg)
	first := picks(in, 30, "a")
	in.SetFaults(cfg)
	if again := picks(in, 30, "a"); !cmp.Equal(first, again) {
		t.Errorf("after SetFaults with the same seed:\n%v\n%v", first, again)
	}
}

func TestDefaultKinds(t *testing.T) {
	tests := []struct {
		name    string
		profile Profile
		cfg     Config
		want    map[string]bool
	}{
		{"package default: four status kinds", Profile{}, Config{Rate: 1, Seed: 1},
			map[string]bool{"500": true, "502": true, "503": true, "429": true}},
		{"profile default", Profile{Kinds: []Kind{Status500, Reset}}, Config{Rate: 1, Seed: 1},
			map[string]bool{"500": true, "reset": true}},
		{"config overrides profile", Profile{Kinds: []Kind{Status500, Reset}}, Config{Rate: 1, Seed: 1, Kinds: []Kind{LoseResponse}},
			map[string]bool{"lose-response": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := New(tt.profile)
			in.SetFaults(tt.cfg)
			got := map[string]bool{}
			for _, k := range picks(in, 200, "a") {
				got[k] = true
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("kinds drawn (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigIsCopied(t *testing.T) {
	in := New(Profile{})
	kinds, ops := []Kind{Status503}, []string{"a"}
	in.SetFaults(Config{Rate: 1, Kinds: kinds, Operations: ops})
	kinds[0], ops[0] = Reset, "b"
	if k, ok := in.Pick("a"); !ok || k != Status503 {
		t.Errorf("Pick(a) = %v, %v after the caller changed its slices", k, ok)
	}
}

func TestFailNextOrder(t *testing.T) {
	in := New(Profile{})
	in.FailNext("a", 2, Status503)
	in.FailNext("b", 1, Reset)
	in.FailNext("a", 1, LoseResponse)
	got := []string{}
	for _, op := range []string{"b", "a", "b", "a", "a", "a"} {
		k, ok := in.Pick(op)
		got = append(got, fmt.Sprintf("%s=%v/%v", op, k, ok))
	}
	want := []string{"b=reset/true", "a=503/true", "b=unknown/false", "a=503/true", "a=lose-response/true", "a=unknown/false"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("picks (-want +got):\n%s", diff)
	}
	wantLog := []string{"b:reset", "a:503", "a:503", "a:lose-response"}
	if diff := cmp.Diff(wantLog, in.FaultLog()); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

// Queued faults come before random ones and do not consume the generator, so adding FailNext
// does not shift the random sequence of the other requests.
func TestFailNextDoesNotShiftRandomFaults(t *testing.T) {
	cfg := Config{Rate: 0.4, Seed: 11, Kinds: allKinds}
	plain := New(Profile{})
	plain.SetFaults(cfg)
	want := picks(plain, 40, "a")

	queued := New(Profile{})
	queued.SetFaults(cfg)
	queued.FailNext("a", 3, Status429)
	got := picks(queued, 43, "a")
	if diff := cmp.Diff([]string{"429", "429", "429"}, got[:3]); diff != "" {
		t.Errorf("queued faults (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, got[3:]); diff != "" {
		t.Errorf("random faults after the queue (-want +got):\n%s", diff)
	}
}

func TestOperationFilter(t *testing.T) {
	tests := []struct {
		name    string
		spared  []string
		ops     []string
		faulted map[string]bool
	}{
		{"empty means all", nil, nil, map[string]bool{"a": true, "k8s.get": true, "token": true, "b": true}},
		{"exact names", nil, []string{"a", "k8s"}, map[string]bool{"a": true}},
		{"prefix", nil, []string{"k8s.*"}, map[string]bool{"k8s.get": true}},
		{"spared when empty", []string{"token"}, nil, map[string]bool{"a": true, "k8s.get": true, "b": true}},
		{"spared but named", []string{"token"}, []string{"token"}, map[string]bool{"token": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := New(Profile{Spared: tt.spared})
			in.SetFaults(Config{Rate: 1, Seed: 5, Operations: tt.ops})
			got := map[string]bool{}
			for _, op := range []string{"a", "k8s.get", "token", "b"} {
				if _, ok := in.Pick(op); ok {
					got[op] = true
				}
			}
			if diff := cmp.Diff(tt.faulted, got); diff != "" {
				t.Errorf("faulted operations (-want +got):\n%s", diff)
			}
		})
	}
}

// Operations outside the filter do not draw from the generator: the selected ones see the
// same sequence whatever else is requested in between.
func TestFilteredOperationsDoNotDraw(t *testing.T) {
	cfg := Config{Rate: 0.5, Seed: 9, Operations: []string{"a"}}
	alone := New(Profile{})
	alone.SetFaults(cfg)
	picks(alone, 30, "a")
	mixed := New(Profile{})
	mixed.SetFaults(cfg)
	picks(mixed, 60, "a", "b")
	if diff := cmp.Diff(alone.FaultLog(), mixed.FaultLog()); diff != "" {
		t.Errorf("log (-alone +mixed):\n%s", diff)
	}
}

func TestConcurrentUse(t *testing.T) {
	in := New(Profile{})
	in.SetFaults(Config{Rate: 0.5, Seed: 1})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			op := fmt.Sprint("op", g)
			for range 100 {
				in.FailNext(op, 1, Status503)
				in.Pick(op)
				in.Pick(op)
				_ = in.FaultLog()
			}
		}()
	}
	wg.Wait()
	if n := len(in.FaultLog()); n < 800 || n > 1600 {
		t.Errorf("%d faults logged, want 800 queued plus about 400 random", n)
	}
}
