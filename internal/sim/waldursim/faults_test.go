package waldursim

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// noReuse is a client that never reuses connections, so Go's transport cannot transparently
// retry a request whose connection was reset.
func noReuse() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
}

func approveRaw(t *testing.T, w *world, orderUUID string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest("POST", w.srv.URL+"/api/marketplace-orders/"+orderUUID+"/approve_by_provider/", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Token test-token")
	req.Header.Set("Content-Type", "application/json")
	return noReuse().Do(req)
}

func TestEachFaultKind(t *testing.T) {
	tests := []struct {
		kind        FaultKind
		wantStatus  int // 0: the connection fails
		wantApplied bool
		check       func(t *testing.T, resp *http.Response, body string)
	}{
		{FaultStatus500, 500, false, func(t *testing.T, _ *http.Response, body string) {
			if !strings.Contains(body, "Server Error (500)") {
				t.Errorf("body %q", body)
			}
		}},
		{FaultStatus502, 502, false, nil},
		{FaultStatus503, 503, false, nil},
		{FaultStatus429, 429, false, func(t *testing.T, resp *http.Response, _ string) {
			if resp.Header.Get("Retry-After") != "0" {
				t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
			}
		}},
		{FaultReset, 0, false, nil},
		{FaultLoseResponse, 0, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.kind.String(), func(t *testing.T) {
			w := newWorld(t, Options{})
			o := w.sim.AddOrder(Order{Type: OrderUpdate, ResourceUUID: w.resource.UUID})
			w.sim.FailNext("marketplace_orders_approve_by_provider", 1, tt.kind)
			resp, err := approveRaw(t, w, o.UUID)
			if tt.wantStatus == 0 {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("request succeeded with %d, want a connection error", resp.StatusCode)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tt.wantStatus {
					t.Fatalf("status %d, want %d", resp.StatusCode, tt.wantStatus)
				}
				if tt.check != nil {
					tt.check(t, resp, string(body))
				}
			}
			got, _ := w.sim.Order(o.UUID)
			if applied := got.State == OrderExecuting; applied != tt.wantApplied {
				t.Errorf("order state %s: applied=%v, want %v", got.State, applied, tt.wantApplied)
			}
			if log := w.sim.FaultLog(); len(log) != 1 || log[0] != "marketplace_orders_approve_by_provider:"+tt.kind.String() {
				t.Errorf("fault log %q", log)
			}
			// The fault was one-shot: a retry now goes through (or meets the applied state).
			resp, err = approveRaw(t, w, o.UUID)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			want := 200
			if tt.wantApplied {
				want = 409 // already executing: the client must reconcile, not blindly retry
			}
			if resp.StatusCode != want {
				t.Errorf("retry status %d, want %d", resp.StatusCode, want)
			}
			if n := w.sim.Calls()["marketplace_orders_approve_by_provider"]; n != 2 {
				t.Errorf("calls %d, want 2 (faulted requests count)", n)
			}
			w.sim.AssertNoViolations(t)
		})
	}
}

func TestFailNextCountsDown(t *testing.T) {
	w := newWorld(t, Options{})
	w.sim.FailNext("version_retrieve", 2, FaultStatus503)
	var got []int
	for range 3 {
		got = append(got, w.call(t, "GET", "/api/version/", nil).status)
	}
	if !slices.Equal(got, []int{503, 503, 200}) {
		t.Errorf("statuses %v", got)
	}
}

func TestFaultOperationsFilter(t *testing.T) {
	w := newWorld(t, Options{})
	w.sim.SetFaults(Faults{Rate: 1, Seed: 1, Operations: []string{"version_retrieve"}})
	if s := w.call(t, "GET", "/api/users/me/", nil).status; s != 200 {
		t.Errorf("users/me status %d, want 200: it is not in Operations", s)
	}
	if s := w.call(t, "GET", "/api/version/", nil).status; s < 429 {
		t.Errorf("version status %d, want a fault", s)
	}
	w.sim.SetFaults(Faults{})
	if s := w.call(t, "GET", "/api/version/", nil).status; s != 200 {
		t.Errorf("status %d after clearing faults", s)
	}
}

// runFaultSequence sends a fixed request sequence and returns the statuses (0 = reset).
func runFaultSequence(t *testing.T, f Faults) ([]int, []string) {
	w := newWorld(t, Options{})
	w.sim.SetFaults(f)
	client := noReuse()
	var statuses []int
	for i := range 200 {
		path := "/api/version/"
		if i%3 == 0 {
			path = "/api/users/me/"
		}
		req, _ := http.NewRequest("GET", w.srv.URL+path, nil)
		req.Header.Set("Authorization", "Token test-token")
		resp, err := client.Do(req)
		if err != nil {
			statuses = append(statuses, 0)
			continue
		}
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
	}
	return statuses, w.sim.FaultLog()
}

func TestSeededFaultsAreDeterministic(t *testing.T) {
	all := []FaultKind{FaultStatus500, FaultStatus502, FaultStatus503, FaultStatus429, FaultReset, FaultLoseResponse}
	a, logA := runFaultSequence(t, Faults{Rate: 0.3, Seed: 42, Kinds: all})
	b, logB := runFaultSequence(t, Faults{Rate: 0.3, Seed: 42, Kinds: all})
	_, logC := runFaultSequence(t, Faults{Rate: 0.3, Seed: 43, Kinds: all})
	if !slices.Equal(a, b) || !slices.Equal(logA, logB) {
		t.Error("the same seed gave different fault sequences")
	}
	if slices.Equal(logA, logC) {
		t.Error("different seeds gave the same fault sequence")
	}
	if n := len(logA); n < 35 || n > 85 {
		t.Errorf("%d faults in 200 requests at rate 0.3", n)
	}
	kinds := map[string]bool{}
	for _, entry := range logA {
		kinds[entry[strings.Index(entry, ":")+1:]] = true
	}
	if len(kinds) != len(all) {
		t.Errorf("kinds seen %v, want all %d", kinds, len(all))
	}
}
