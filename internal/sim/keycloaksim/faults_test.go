package keycloaksim

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestFailNext(t *testing.T) {
	tests := []struct {
		kind       FaultKind
		wantStatus int // 0: the connection is dropped
		applied    bool
	}{
		{Fault500, 500, false},
		{Fault502, 502, false},
		{Fault503, 503, false},
		{Fault429, 429, false},
		{FaultReset, 0, false},
		{FaultLoseResponse, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.kind.String(), func(t *testing.T) {
			h := start(t, Options{})
			h.sim.FailNext(RouteCreateGroup, 1, tt.kind)
			req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/admin/realms/waldur/groups", strings.NewReader(`{"name":"g"}`))
			req.Header.Set("Authorization", "Bearer "+h.token)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultTransport.RoundTrip(req)
			status := 0
			if err == nil {
				status = resp.StatusCode
				resp.Body.Close()
			}
			if status != tt.wantStatus {
				t.Fatalf("status %d (err %v), want %d", status, err, tt.wantStatus)
			}
			if _, ok := h.sim.GroupID("/g"); ok != tt.applied {
				t.Errorf("group created = %v, want %v", ok, tt.applied)
			}
			if got := h.sim.FaultLog(); len(got) != 1 || got[0] != RouteCreateGroup+":"+tt.kind.String() {
				t.Errorf("FaultLog() = %v", got)
			}
			if status, _, _ := h.do(http.MethodGet, "/groups", ""); status != 200 {
				t.Errorf("fault did not clear: HTTP %d", status)
			}
		})
	}
}

func TestRandomFaultsAreDeterministic(t *testing.T) {
	run := func() []string {
		h := start(t, Options{})
		h.sim.SetFaults(Faults{Rate: 0.5, Seed: 7, Kinds: []FaultKind{Fault500, Fault503}, Operations: []string{RouteGroups}})
		for range 20 {
			h.do(http.MethodGet, "/groups", "")
			h.do(http.MethodGet, "/users", "") // not in Operations: never faulted
		}
		return h.sim.FaultLog()
	}
	a, b := run(), run()
	if len(a) < 5 || len(a) > 15 || !reflect.DeepEqual(a, b) {
		t.Fatalf("fault logs differ or are implausible for rate 0.5:\n%v\n%v", a, b)
	}
}
