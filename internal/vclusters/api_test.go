package vclusters

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"
	"k8s.io/client-go/rest"

	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/vclusters/tunnel"
)

// unreachableDeps point at a main API server that is not there: setup fails and is retried,
// which is all these tests need.
func unreachableDeps(t *testing.T) Deps {
	t.Helper()
	rc := &rest.Config{Host: "https://127.0.0.1:1", Timeout: time.Second}
	kube, err := NewKube(rc)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(rc.Host)
	return Deps{Kube: kube, KubeURL: u, KubeTransport: nil, Logger: zaptest.NewLogger(t), Metrics: NewMetrics()}
}

func TestAPIRejectsBadRequestsClearly(t *testing.T) {
	sim, srv := rancherSim(t)
	m, err := NewManager(testConfig(t, srv.URL, sim.Token()), unreachableDeps(t))
	if err != nil {
		t.Fatal(err)
	}
	runManager(t, m)
	h := m.Handler()
	if a := call(t, h, "POST", "/clusters", `{"name":"vc-ok"}`); a.code != 201 || a.body["status"] != "creating" || a.body["namespace"] != "cluster-vc-ok" {
		t.Fatalf("create: %d %s", a.code, a.raw)
	}
	checkBadRequests(t, h)
	if a := call(t, h, "POST", "/clusters", `{"name":"vc-ok"}`); a.body["field"] != "name" {
		t.Errorf("duplicate does not name the field: %s", a.raw)
	}
	checkSetupFailureShows(t, m, sim)
}

// checkBadRequests expects a cluster vc-ok to exist.
func checkBadRequests(t *testing.T, h http.Handler) {
	t.Helper()
	long := strings.Repeat("a", maxNameLen+1)
	for _, tc := range []struct {
		method, path, body string
		code               int
		says               string
	}{
		{"POST", "/clusters", `{"name":"vc-ok"}`, 409, "exists"},
		{"POST", "/clusters", `{"name":"Upper"}`, 422, "DNS-1123"},
		{"POST", "/clusters", `{"name":"a_b"}`, 422, "DNS-1123"},
		{"POST", "/clusters", `{"name":"-x"}`, 422, "DNS-1123"},
		{"POST", "/clusters", `{"name":""}`, 422, "name is required"},
		{"POST", "/clusters", `{"name":"` + long + `"}`, 422, "at most 55"},
		{"POST", "/clusters", `{}`, 422, "name is required"},
		{"POST", "/clusters", `{"name":"x","nodes":3}`, 400, "unknown field"},
		{"POST", "/clusters", `{"name":`, 400, "JSON object"},
		{"POST", "/clusters", `{"name":"x"}{"name":"y"}`, 400, "one JSON object"},
		{"POST", "/clusters", `["x"]`, 400, "JSON object"},
		{"GET", "/clusters/nope", "", 404, "no virtual cluster named nope"},
		{"DELETE", "/clusters/nope", "", 404, "no virtual cluster named nope"},
		{"PUT", "/clusters/vc-ok", "", 405, ""},
		{"GET", "/nothing", "", 404, ""},
	} {
		a := call(t, h, tc.method, tc.path, tc.body)
		if a.code != tc.code || !strings.Contains(a.raw, tc.says) {
			t.Errorf("%s %s %s: %d %s, want %d %q", tc.method, tc.path, tc.body, a.code, a.raw, tc.code, tc.says)
		}
	}
}

// checkSetupFailureShows: with no main API server, setup fails visibly and nothing reaches Rancher.
func checkSetupFailureShows(t *testing.T, m *Manager, sim *ranchersim.Server) {
	t.Helper()
	h := m.Handler()
	list := call(t, h, "GET", "/clusters", "")
	if cl := list.body["clusters"].([]any); list.code != 200 || len(cl) != 1 {
		t.Errorf("list: %d %s", list.code, list.raw)
	}
	// Setup cannot reach the main API server: the cluster shows the reason and is retried.
	waitFor(t, "the setup failure to show", func() bool {
		v, _ := m.Get("vc-ok")
		return v.Status == StatusError && strings.Contains(v.Reason, "tenant")
	})
	if a := call(t, h, "GET", "/metrics", ""); !strings.Contains(a.raw, `site_agent_vclusters_clusters{status="error"} 1`) ||
		!strings.Contains(a.raw, `site_agent_vclusters_errors_total{stage="setup"}`) {
		t.Errorf("metrics lack the cluster gauge or the setup errors:\n%s", a.raw)
	}
	// Nothing reached Rancher: the failure came before the import.
	if len(sim.ImportedClusters()) != 0 {
		t.Errorf("rancher has clusters: %v", sim.ImportedClusters())
	}
	// Deleting needs the main API server too: a clear 502, the cluster kept for a retry.
	if a := call(t, h, "DELETE", "/clusters/vc-ok", ""); a.code != 502 || !strings.Contains(a.raw, "retry DELETE") {
		t.Errorf("delete without a main API server: %d %s", a.code, a.raw)
	}
	if v, ok := m.Get("vc-ok"); !ok || v.Status != StatusError || !strings.Contains(v.Reason, "deletion failed") {
		t.Errorf("after the failed delete: %+v %v", v, ok)
	}
}

func TestCreateIsRecordedBeforeItAnswers(t *testing.T) {
	sim, srv := rancherSim(t)
	cfg := testConfig(t, srv.URL, sim.Token())
	m, err := NewManager(cfg, unreachableDeps(t))
	if err != nil {
		t.Fatal(err)
	}
	stop := runManager(t, m)
	if a := call(t, m.Handler(), "POST", "/clusters", `{"name":"vc-rec"}`); a.code != 201 {
		t.Fatal(a.raw)
	}
	data, err := os.ReadFile(filepath.Join(cfg.StateDir, "state.json"))
	if err != nil || !strings.Contains(string(data), `"name": "vc-rec"`) {
		t.Fatalf("state file right after POST: %v\n%s", err, data)
	}
	stop()
	// A new manager on the same state directory knows the cluster and resumes it.
	m2, err := NewManager(cfg, unreachableDeps(t))
	if err != nil {
		t.Fatal(err)
	}
	runManager(t, m2)
	if v, ok := m2.Get("vc-rec"); !ok || v.ID == "" {
		t.Fatalf("after restart: %+v %v", v, ok)
	}
	if a := call(t, m2.Handler(), "POST", "/clusters", `{"name":"vc-rec"}`); a.code != 409 {
		t.Errorf("a resumed name is taken: %d", a.code)
	}
}

func TestCreateBeforeRunIsRefused(t *testing.T) {
	sim, srv := rancherSim(t)
	m, err := NewManager(testConfig(t, srv.URL, sim.Token()), unreachableDeps(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create("early"); err != ErrNotRunning {
		t.Errorf("create before Run: %v", err)
	}
	// Through the API it is a retryable 503, not a server error.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/clusters", strings.NewReader(`{"name":"early"}`))
	req.Host = "localhost:9090"
	req.Header.Set("Content-Type", "application/json")
	m.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Errorf("POST before Run: %d %q", rec.Code, rec.Body.String())
	}
	select {
	case <-m.Running():
		t.Error("Running closed before Run")
	default:
	}
}

func waitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	waitForLong(t, 10*time.Second, what, ok)
}

func waitForLong(t testing.TB, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A handshake Rancher refuses is logged with its answer (e.g. real Rancher's 400 conflict at
// /v3/connect/register), not only counted.
func TestRefusedHandshakesAreLogged(t *testing.T) {
	sim, srv := rancherSim(t)
	core, logs := observer.New(zapcore.InfoLevel)
	deps := unreachableDeps(t)
	deps.Logger = zap.New(core)
	m, err := NewManager(testConfig(t, srv.URL, sim.Token()), deps)
	if err != nil {
		t.Fatal(err)
	}
	c := newCluster(Record{Name: "vc-log", ID: "vc-1"})
	conflict := `Operation cannot be fulfilled on clusters.management.cattle.io "c-x": the object has been modified`
	m.handshakeFailed(c, tunnel.Agent, &tunnel.HandshakeError{Status: 400, Body: conflict})
	got := logs.FilterMessage("rancher refused the tunnel handshake, retrying").All()
	if len(got) != 1 || got[0].ContextMap()["answer"] != conflict || got[0].ContextMap()["status"] != int64(400) {
		t.Errorf("logged %v", logs.All())
	}
}

// Scale and chaos requests are checked before anything changes; a cluster still being set up
// gets the new size from its setup.
func TestScaleAndChaosRequests(t *testing.T) {
	sim, srv := rancherSim(t)
	m, err := NewManager(testConfig(t, srv.URL, sim.Token()), unreachableDeps(t))
	if err != nil {
		t.Fatal(err)
	}
	runManager(t, m)
	h := m.Handler()
	if a := call(t, h, "POST", "/clusters", `{"name":"vc-size"}`); a.code != 201 || a.body["nodes"] != 3.0 || a.body["pods"] != 10.0 {
		t.Fatalf("create: %d %s", a.code, a.raw)
	}
	for _, tc := range []struct {
		path, body string
		code       int
		says       string
	}{
		{"/clusters/vc-size/scale", `{}`, 400, "or both"},
		{"/clusters/vc-size/scale", `{"nodes":2,"cpus":4}`, 400, "unknown field"},
		{"/clusters/vc-size/scale", `{"nodes":"two"}`, 400, "JSON object"},
		{"/clusters/vc-size/scale", `{"nodes":0}`, 422, "nodes must be between 1 and 1000"},
		{"/clusters/vc-size/scale", `{"pods":10001}`, 422, "pods must be between 0 and 10000"},
		{"/clusters/nope/scale", `{"nodes":2}`, 404, "no virtual cluster named nope"},
		{"/clusters/vc-size/chaos", `{}`, 400, "must set"},
		{"/clusters/vc-size/chaos", `{"notready":4}`, 422, "between 0 and the cluster's 3 nodes"},
		{"/clusters/vc-size/chaos", `{"notready":-1}`, 422, "between 0"},
		{"/clusters/nope/chaos", `{"notready":1}`, 404, "no virtual cluster named nope"},
	} {
		if a := call(t, h, "POST", tc.path, tc.body); a.code != tc.code || !strings.Contains(a.raw, tc.says) {
			t.Errorf("POST %s %s: %d %s, want %d and %q", tc.path, tc.body, a.code, a.raw, tc.code, tc.says)
		}
	}
	if a := call(t, h, "POST", "/clusters/vc-size/scale", `{"nodes":5,"pods":7}`); a.code != 200 || a.body["nodes"] != 5.0 || a.body["pods"] != 7.0 {
		t.Errorf("scale: %d %s", a.code, a.raw)
	}
	if a := call(t, h, "POST", "/clusters/vc-size/chaos", `{"notready":2}`); a.code != 200 || a.body["notReady"] != 2.0 {
		t.Errorf("chaos: %d %s", a.code, a.raw)
	}
	if a := call(t, h, "POST", "/clusters/vc-size/scale", `{"nodes":1}`); a.code != 200 || a.body["nodes"] != 1.0 || a.body["pods"] != 7.0 || a.body["notReady"] != 1.0 {
		t.Errorf("scale below the nodes told to stop: %d %s", a.code, a.raw)
	}
	// The size is recorded: a restarted tool keeps it.
	waitFor(t, "the state file", func() bool {
		st, err := newStateFile(m.cfg.StateDir).load()
		return err == nil && len(st) == 1 && st[0].Nodes == 1 && st[0].Pods == 7 && st[0].NotReady == 1
	})

	// Without a kubelet stand-in no Node heartbeats, so there is nothing to stop.
	cfg := testConfig(t, srv.URL, sim.Token())
	cfg.Kwok.Mode = KwokOff
	off, err := NewManager(cfg, unreachableDeps(t))
	if err != nil {
		t.Fatal(err)
	}
	runManager(t, off)
	call(t, off.Handler(), "POST", "/clusters", `{"name":"vc-static"}`)
	if a := call(t, off.Handler(), "POST", "/clusters/vc-static/chaos", `{"notready":1}`); a.code != 422 || !strings.Contains(a.raw, "kwok.mode") {
		t.Errorf("chaos without kwok: %d %s", a.code, a.raw)
	}
}
