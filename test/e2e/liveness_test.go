package e2e

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// While one backend operation takes long (inmemory latency 20 s, far longer than healthz's limit
// in this test), the agent is alive: the heartbeat file stays fresh and /healthz answers 200. A
// cycle that outlives its timeout (1 s) by the stop grace (4 s) is reported stuck on /readyz and
// in the metrics — without the liveness probe restarting a process that is only slow.
func TestLivenessDuringLongBackendWork(t *testing.T) {
	e := newEnv(t, waldursim.Options{}, "latency: 20s")
	e.world.CreateOrder("slow", map[string]float64{"cpu": 1})
	t.Setenv("SITE_AGENT_HEARTBEAT_INTERVAL", "200ms")
	t.Setenv("SITE_AGENT_CYCLE_TIMEOUT", "1s")
	addr := freeAddr(t)
	p := e.start("-m", "order_process", "-c", e.config, "--period", "1h", "--listen", addr)
	base := "http://" + addr
	waitFor(t, 10*time.Second, "the listener", func() bool { return get(base+"/healthz") != 0 })
	start := time.Now()
	hb := filepath.Join(e.dir, "heartbeat")
	for _, at := range []time.Duration{2 * time.Second, 4 * time.Second} {
		time.Sleep(time.Until(start.Add(at)))
		if r := e.run("healthz", "--liveness-only", "--heartbeat-file", hb, "--max-age", "1"); r.code != 0 {
			t.Fatalf("%s into a slow backend call, healthz --max-age 1: %s\nagent output:\n%s", at, r, tail(p.out.String()))
		}
		if code := get(base + "/healthz"); code != 200 {
			t.Fatalf("%s into a slow backend call, /healthz = %d", at, code)
		}
	}
	if m := body(t, base+"/metrics"); !strings.Contains(m, `site_agent_cycle_running_seconds{mode="order_process",offering_uuid="`+offeringLabel(e)+`"}`) {
		t.Errorf("metrics lack the running cycle's age")
	}
	var ready string
	waitFor(t, 8*time.Second, "/readyz to report the stuck cycle", func() bool {
		code, text := getText(base + "/readyz")
		ready = text
		return code == http.StatusServiceUnavailable && strings.Contains(text, "stuck")
	})
	if !strings.Contains(ready, "Cloud Compute") || !strings.Contains(ready, "timeout 1s") {
		t.Errorf("/readyz should name the offering and the timeout: %q", ready)
	}
	waitFor(t, 3*time.Second, "the stuck-cycle metric (set on the next heartbeat tick)", func() bool {
		return strings.Contains(body(t, base+"/metrics"), `site_agent_cycle_stuck{mode="order_process",offering_uuid="`+offeringLabel(e)+`"} 1`)
	})
}

func getText(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
