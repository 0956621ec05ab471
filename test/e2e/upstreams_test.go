package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// The upstreams section (file or SITE_AGENT_UPSTREAMS_* environment) is validated before any
// request and decides how often a Waldur request is tried.
func TestUpstreamSettings(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	good, err := os.ReadFile(e.config)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(e.dir, "bad-upstream.yaml")
	if err := os.WriteFile(bad, append([]byte("upstreams:\n  rancher: {timeout: soon}\n"), good...), 0o600); err != nil {
		t.Fatal(err)
	}
	invalid := []struct {
		name string
		env  []string
		file string
		want string
	}{
		{"file", nil, bad, "upstreams.rancher.timeout"},
		{"environment", []string{"SITE_AGENT_UPSTREAMS_WALDUR_RETRIES=11"}, e.config, "upstreams.waldur.retries: must be between 0 and 10"},
	}
	for _, c := range invalid {
		e.sim.ResetCalls()
		r := e.runEnv(c.env, "-m", "order_process", "-c", c.file, "--once")
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || e.sim.TotalCalls() != 0 {
			t.Fatalf("%s: want exit 2 naming %q before any request (%d sent): %s", c.name, c.want, e.sim.TotalCalls(), r)
		}
	}

	o := e.world.CreateOrder("retried", map[string]float64{"cpu": 1})
	fast := []string{"SITE_AGENT_UPSTREAMS_WALDUR_BACKOFF_MIN=1ms", "SITE_AGENT_UPSTREAMS_WALDUR_BACKOFF_MAX=2ms"}
	tries := []struct {
		retries   string
		wantCode  int
		wantCalls int
	}{
		{"1", 1, 2}, // two 503s, one retry: the listing fails, the order waits
		{"2", 0, 3}, // two 503s, two retries: the third attempt lists the order
	}
	for _, tc := range tries {
		e.sim.FailNext("marketplace_orders_list", 2, waldursim.FaultStatus503)
		before := e.sim.Calls()["marketplace_orders_list"]
		r := e.runEnv(append([]string{"SITE_AGENT_UPSTREAMS_WALDUR_RETRIES=" + tc.retries}, fast...), "-m", "order_process", "-c", e.config, "--once")
		if calls := e.sim.Calls()["marketplace_orders_list"] - before; r.code != tc.wantCode || calls != tc.wantCalls {
			t.Fatalf("retries %s: exit %d after %d order listings, want exit %d after %d: %s", tc.retries, r.code, calls, tc.wantCode, tc.wantCalls, r)
		}
	}
	if got, _ := e.sim.Order(o.UUID); got.State != waldursim.OrderDone {
		t.Fatalf("order %s, want done", got.State)
	}
}
