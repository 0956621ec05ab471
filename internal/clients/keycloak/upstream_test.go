package keycloak

import (
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/sim/keycloaksim"
	"github.com/waldur/site-agent/internal/upstream"
)

// The upstreams.keycloak section sets the retries: counted on the simulator.
func TestWithUpstreamSetsRetries(t *testing.T) {
	one, none := 1, 0
	cases := []struct {
		name     string
		settings upstream.Settings
		attempts int
	}{
		{"retries 1", upstream.Settings{Retries: &one, BackoffMin: time.Millisecond, BackoffMax: time.Millisecond}, 2},
		{"retries 0", upstream.Settings{Retries: &none}, 1},
		{"unset keeps the client's", upstream.Settings{BackoffMax: time.Millisecond}, 7}, // newEnv: 6 retries
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, keycloaksim.Options{}, WithUpstream(tc.settings))
			gid := must(e.client.EnsureGroup(ctx(t), parent, "", child, ""))
			e.sim.FailNext(keycloaksim.RouteMembers, 100, keycloaksim.Fault503)
			before := e.sim.Calls()[keycloaksim.RouteMembers]
			_, err := e.client.Members(ctx(t), gid)
			if !failure.IsTransient(err) {
				t.Fatalf("Members = %v, want a transient error", err)
			}
			if got := e.sim.Calls()[keycloaksim.RouteMembers] - before; got != tc.attempts {
				t.Fatalf("%d attempts, want %d", got, tc.attempts)
			}
		})
	}
}
