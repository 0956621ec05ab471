package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
	"github.com/waldur/site-agent/internal/telemetry"
)

func TestInvalidConfigExitsTwoWithoutNetwork(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	good, err := os.ReadFile(e.config)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, from, to, want string }{
		{"bad uuid", e.world.Offering.UUID, "nope", "offerings[0].waldur_offering_uuid"},
		{"unknown backend", "order_processing_backend: inmemory", "order_processing_backend: slurm", "offerings[0].order_processing_backend"},
		{"bad component", "accounting_type: usage, label: Storage", "accounting_type: fixed, label: Storage", "backend_components.storage.accounting_type"},
		{"bad backend setting", "usage_fraction: 0.5", "usage_fraction: lots", "usage_fraction"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := strings.Replace(string(good), c.from, c.to, 1)
			if c.name == "bad backend setting" {
				text = strings.Replace(string(good), "    backend_components:", "      usage_fraction: lots\n    backend_components:", 1)
			}
			path := filepath.Join(e.dir, c.name+".yaml")
			if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			e.sim.ResetCalls()
			r := e.run("-m", "order_process", "-c", path, "--once")
			if r.code != 2 || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("want exit 2 naming %q: %s", c.want, r)
			}
			if strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Errorf("want one readable line, got:\n%s", r.stderr)
			}
			if n := e.sim.TotalCalls(); n != 0 {
				t.Fatalf("%d requests sent despite invalid configuration", n)
			}
		})
	}
	if r := e.run("-m", "nonsense", "-c", e.config); r.code != 2 {
		t.Fatalf("unknown mode: %s", r)
	}
	if r := e.run("-m", "order_process", "-c", e.config, "--bogus-flag"); r.code != 2 {
		t.Fatalf("unknown flag: %s", r)
	}
}

func TestSIGTERMStopsWithinFiveSeconds(t *testing.T) {
	e := newEnv(t, waldursim.Options{}, "latency: 50ms")
	for i := 0; i < 30; i++ {
		e.world.CreateOrder(fmt.Sprintf("s-%02d", i), map[string]float64{"cpu": 1})
	}
	p := e.start("-m", "order_process", "-c", e.config, "--period", "1h")
	waitFor(t, 30*time.Second, "work in flight", func() bool { return len(e.objects()) > 0 })
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, p.out)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("still running 5 s after SIGTERM")
	}
	t.Logf("stopped in %s", time.Since(start).Round(time.Millisecond))
	for _, o := range e.sim.Orders() {
		if o.State == waldursim.OrderErred {
			t.Fatalf("stopping erred an order: %s", o.ErrorMessage)
		}
	}
}

func TestMetricsHealthAndHeartbeat(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	e.world.CreateOrder("metered", map[string]float64{"cpu": 1})
	addr := freeAddr(t)
	e.start("-m", "order_process", "-c", e.config, "--period", "100ms", "--listen", addr)
	base := "http://" + addr
	waitFor(t, 20*time.Second, "readiness", func() bool { return get(base+"/readyz") == 200 })
	if code := get(base + "/healthz"); code != 200 {
		t.Fatalf("/healthz = %d", code)
	}
	waitFor(t, 20*time.Second, "order metric", func() bool {
		return strings.Contains(body(t, base+"/metrics"), `site_agent_orders_total{offering_uuid="`+offeringLabel(e)+`",result="done",type="Create"} 1`)
	})
	metrics := body(t, base+"/metrics")
	for _, want := range []string{"site_agent_waldur_requests_total", "site_agent_backend_operations_total", "site_agent_cycles_total"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(metrics, scenario.Token) {
		t.Fatal("metrics leak the token")
	}
	hb := filepath.Join(e.dir, "heartbeat")
	if r := e.run("healthz", "--liveness-only", "--heartbeat-file", hb); r.code != 0 {
		t.Fatalf("healthz liveness: %s", r)
	}
	if r := e.run("healthz", "--config-file", e.config); r.code != 0 {
		t.Fatalf("healthz readiness: %s", r)
	}
	if r := e.run("healthz", "--liveness-only", "--heartbeat-file", filepath.Join(e.dir, "nope")); r.code != 1 {
		t.Fatalf("healthz with no heartbeat: %s", r)
	}
}

func TestDiagnosticsAndLoadComponents(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	r := e.run("diagnostics", "-c", e.config)
	if r.code != 0 {
		t.Fatalf("diagnostics: %s", r)
	}
	t.Logf("diagnostics output:\n%s", r.stdout)
	for _, want := range []string{"waldur reachable", "credentials", "offering readable", "permissions", "inmemory · in-memory state", "all checks passed"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("diagnostics output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout+r.stderr, scenario.Token) {
		t.Fatal("diagnostics print the token")
	}
	bad := strings.Replace(readFile(t, e.config), scenario.Token, "wrong-token-123456", 1)
	badPath := filepath.Join(e.dir, "bad.yaml")
	writeFile(t, badPath, bad)
	r = e.run("diagnostics", "-c", badPath)
	if r.code != 1 || !strings.Contains(r.stdout, "FAIL") || !strings.Contains(r.stdout, "401") {
		t.Fatalf("diagnostics with a wrong token should fail clearly: %s", r)
	}
	if strings.Contains(r.stdout, "wrong-token-123456") {
		t.Fatal("diagnostics print the wrong token")
	}

	// load-components: the config adds units and labels; Waldur learns them.
	withGPU := strings.Replace(readFile(t, e.config), "    backend_components:\n",
		"    backend_components:\n      gpu: {limit: 2, measured_unit: GPUs, accounting_type: limit, label: GPU, description: A100 cards}\n", 1)
	writeFile(t, e.config, withGPU)
	r = e.run("load-components", "-c", e.config)
	if r.code != 0 || !strings.Contains(r.stdout, "component gpu created") || !strings.Contains(r.stdout, "component cpu updated") {
		t.Fatalf("load-components: %s", r)
	}
	off, _ := e.sim.Offering(e.world.Offering.UUID)
	found := false
	for _, c := range off.Components {
		if c.Type == "gpu" && c.Name == "GPU" && c.MeasuredUnit == "GPUs" && c.LimitAmount != nil && *c.LimitAmount == 2 {
			found = true
		}
	}
	if !found {
		t.Fatalf("gpu component not created as configured: %+v", off.Components)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	o := e.world.CreateOrder("dry", map[string]float64{"cpu": 1})
	e.once("order_process", "--dry-run")
	e.once("membership_sync", "--dry-run")
	for op := range e.sim.Calls() {
		if !strings.HasSuffix(op, "_list") && !strings.HasSuffix(op, "_retrieve") {
			t.Errorf("dry run sent %s", op)
		}
	}
	if got, _ := e.sim.Order(o.UUID); got.State != waldursim.OrderPendingProvider {
		t.Fatalf("dry run changed the order to %s", got.State)
	}
	if _, err := os.Stat(e.state); err == nil && len(e.objects()) > 0 {
		t.Fatal("dry run created backend objects")
	}
}

func TestOIDCOnEveryPath(t *testing.T) {
	var hits atomic.Int32
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" ||
			r.PostForm.Get("client_secret") != "oidc-secret-value" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		hits.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "jwt-access-token-1", "expires_in": 300, "token_type": "Bearer"})
	}))
	defer idp.Close()
	e := newEnv(t, waldursim.Options{BearerTokens: []string{"jwt-access-token-1"}})
	text := strings.Replace(readFile(t, e.config), `waldur_api_token: "`+scenario.Token+`"`,
		fmt.Sprintf("oidc_token_url: %q\n    oidc_client_id: site-agent\n    oidc_client_secret: oidc-secret-value", idp.URL), 1)
	writeFile(t, e.config, text)
	e.world.CreateOrder("oidc", map[string]float64{"cpu": 1})
	e.once("order_process")
	for _, args := range [][]string{{"diagnostics", "-c", e.config}, {"load-components", "-c", e.config}} {
		if r := e.run(args...); r.code != 0 || strings.Contains(r.stdout+r.stderr, "oidc-secret-value") {
			t.Fatalf("%v with OIDC: %s", args, r)
		}
	}
	if s := e.orderStates(); s[waldursim.OrderDone] != 1 {
		t.Fatalf("order not done with OIDC: %v", s)
	}
	if hits.Load() < 3 {
		t.Fatalf("expected each command to fetch a token, got %d fetches", hits.Load())
	}
}

func TestPeriodEnvironmentVariable(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	r := e.runEnv([]string{"WALDUR_SITE_AGENT_ORDER_PROCESS_PERIOD_MINUTES=soon"}, "-m", "order_process", "-c", e.config)
	if r.code != 2 || !strings.Contains(r.stderr, "WALDUR_SITE_AGENT_ORDER_PROCESS_PERIOD_MINUTES") {
		t.Fatalf("invalid period: %s", r)
	}
}

// offeringLabel is the world's offering as the offering_uuid label writes it.
func offeringLabel(e *env) string { return telemetry.OfferingLabel(e.world.Offering.UUID) }

func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func get(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func body(t testing.TB, url string) string {
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func readFile(t testing.TB, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t testing.TB, p, s string) {
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestSIGHUPReloadsConfigAndKeepsRunningOnBadConfig(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	addr := freeAddr(t)
	p := e.start("-m", "order_process", "-c", e.config, "--period", "200ms", "--listen", addr)
	waitFor(t, 20*time.Second, "first cycle", func() bool { return e.sim.Calls()["marketplace_orders_list"] > 0 })
	reloads := func() string {
		m := body(t, "http://"+addr+"/metrics")
		return fmt.Sprintf("failure %v, success %v", strings.Contains(m, `site_agent_config_reloads_total{result="failure"} 1`),
			strings.Contains(m, `site_agent_config_reloads_total{result="success"} 1`))
	}
	if got := reloads(); got != "failure false, success false" {
		t.Fatalf("reload counters before any reload: %s", got)
	}

	// An invalid file: the agent logs the problem and keeps working with the old one.
	good := readFile(t, e.config)
	writeFile(t, e.config, strings.Replace(good, "accounting_type: usage", "accounting_type: sometimes", 1))
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "reload failure logged", func() bool { return strings.Contains(p.out.String(), "reload failed") })
	if got := reloads(); got != "failure true, success false" {
		t.Fatalf("reload counters after a refused reload: %s", got)
	}
	first := e.world.CreateOrder("before-reload", map[string]float64{"cpu": 100})
	waitFor(t, 20*time.Second, "order done with the old configuration", func() bool {
		o, _ := e.sim.Order(first.UUID)
		return o.State == waldursim.OrderDone
	})

	// A valid new file takes effect: the site now caps CPU at 10.
	e.writeConfig("state_file: "+e.state, "max_limits: {cpu: 10}")
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "reload", func() bool { return strings.Contains(p.out.String(), "configuration reloaded") })
	if got := reloads(); got != "failure true, success true" {
		t.Fatalf("reload counters after an applied reload: %s", got)
	}
	if st := body(t, "http://"+addr+"/status.json"); !strings.Contains(st, `"succeeded": 1`) || !strings.Contains(st, `"failed": 1`) ||
		!strings.Contains(st, "accounting_type") {
		t.Errorf("/status.json does not show the reloads and the refused one's error:\n%s", st)
	}
	second := e.world.CreateOrder("after-reload", map[string]float64{"cpu": 100})
	waitFor(t, 20*time.Second, "order rejected under the new configuration", func() bool {
		o, _ := e.sim.Order(second.UUID)
		return o.State == waldursim.OrderRejected
	})
}
