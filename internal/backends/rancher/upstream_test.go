package rancher

import (
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/upstream"
)

// The configuration's upstreams section reaches the Rancher, Kubernetes and Keycloak clients;
// backend_settings.timeout still wins for its offering.
func TestUpstreamSettingsApply(t *testing.T) {
	one := 1
	ups := upstream.Upstreams{
		upstream.Rancher:  {Timeout: 3 * time.Second, Retries: &one, BackoffMin: time.Millisecond, BackoffMax: time.Millisecond},
		upstream.Keycloak: {Timeout: 4 * time.Second},
	}
	f := newFixture(t, fixtureOpts{})
	settings := map[string]any{}
	for k, v := range f.settings {
		settings[k] = v
	}
	delete(settings, "timeout")
	b, _, err := New(backends.Params{Offering: "test", Settings: settings, Components: testComps, Logger: zaptest.NewLogger(t), Upstreams: ups})
	if err != nil {
		t.Fatal(err)
	}
	cfg := core(b).cfg
	if got := []time.Duration{cfg.timeoutFor(upstream.Rancher), cfg.timeoutFor(upstream.Keycloak), cfg.timeoutFor(upstream.Kubernetes)}; got[0] != 3*time.Second || got[1] != 4*time.Second || got[2] != 30*time.Second {
		t.Errorf("timeouts rancher, keycloak, kubernetes = %v; want 3s, 4s and the 30s default", got)
	}
	if got := cfg.settingsFor(upstream.Kubernetes); got.Retries != nil || got.BackoffMin != 0 || got.BackoffMax != 0 || got.Timeout != 30*time.Second {
		t.Errorf("kubernetes settings %+v, want the client's defaults and the 30s timeout", got)
	}
	if got := cfg.settingsFor(upstream.Rancher); *got.Retries != 1 || got.Timeout != 3*time.Second {
		t.Errorf("rancher settings %+v, want the upstreams section's", got)
	}

	f.rs.FailNext("cluster.get", 5, ranchersim.Fault503)
	before := f.rs.Calls()["cluster.get"]
	if err := b.(backends.Pinger).Ping(ctxT(t)); !failure.IsTransient(err) {
		t.Fatalf("Ping = %v, want a transient failure", err)
	}
	if got := f.rs.Calls()["cluster.get"] - before; got != 2 {
		t.Fatalf("%d attempts, want 2 (upstreams.rancher.retries: 1)", got)
	}

	settings["timeout"] = "20s"
	b, _, err = New(backends.Params{Offering: "test", Settings: settings, Components: testComps, Upstreams: ups})
	if err != nil {
		t.Fatal(err)
	}
	if got := core(b).cfg.timeoutFor(upstream.Rancher); got != 20*time.Second {
		t.Errorf("backend_settings.timeout 20s: rancher timeout %v", got)
	}
}
