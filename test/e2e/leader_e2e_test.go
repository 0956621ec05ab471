package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/waldursim"
	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// Lease timing of the HA test: the defaults' ratios, shorter so the test takes seconds.
const (
	haLease = 3 * time.Second
	haRenew = 2 * time.Second
	haRetry = 500 * time.Millisecond
)

// replicaView serves the shared simulator to one replica on its own address and records what
// that replica sent: so the test knows which replica touched Waldur, and when.
type replicaView struct {
	h     http.Handler
	srv   *httptest.Server
	mu    sync.Mutex
	times []time.Time
	done  map[string]int // order UUID → accepted set_state_done calls
}

var setDone = regexp.MustCompile(`^/api/marketplace-orders/([0-9a-f-]+)/set_state_done/$`)

func newReplicaView(t *testing.T, h http.Handler) *replicaView {
	v := &replicaView{h: h, done: map[string]int{}}
	v.srv = httptest.NewServer(v)
	t.Cleanup(v.srv.Close)
	return v
}

func (v *replicaView) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	v.mu.Lock()
	v.times = append(v.times, time.Now())
	v.mu.Unlock()
	rec := &statusWriter{ResponseWriter: w, code: 200}
	v.h.ServeHTTP(rec, r)
	if m := setDone.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodPost && rec.code < 300 {
		v.mu.Lock()
		v.done[strings.ReplaceAll(m[1], "-", "")]++
		v.mu.Unlock()
	}
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) { s.code = code; s.ResponseWriter.WriteHeader(code) }

// requests counts requests in [from, to).
func (v *replicaView) requests(from, to time.Time) (n int, first time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, at := range v.times {
		if !at.Before(from) && at.Before(to) {
			if n == 0 {
				first = at
			}
			n++
		}
	}
	return n, first
}

// writeKubeconfig writes a kubeconfig for the admin user of env.
func writeKubeconfig(t *testing.T, env *kubeenv.Env, path string) {
	t.Helper()
	cfg := map[string]any{
		"apiVersion": "v1", "kind": "Config", "current-context": "test",
		"clusters": []any{map[string]any{"name": "test", "cluster": map[string]any{"server": env.Host,
			"certificate-authority-data": env.CAData}}},
		"users":    []any{map[string]any{"name": "admin", "user": map[string]any{"token": env.Token}}},
		"contexts": []any{map[string]any{"name": "test", "context": map[string]any{"cluster": "test", "user": "admin"}}},
	}
	data, err := json.Marshal(cfg) // JSON is YAML; []byte marshals as base64 as kubeconfig wants
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

var listenLine = regexp.MustCompile(`"event":"serving metrics and health"[^\n]*"address":"([^"]+)"`)

// probe returns the status line and body of a replica's health endpoint.
func probe(t *testing.T, p *proc, path string) string {
	t.Helper()
	var addr string
	waitFor(t, 10*time.Second, "the replica's listener", func() bool {
		m := listenLine.FindStringSubmatch(p.out.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	})
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s", resp.StatusCode, body)
}

// TestLeaderElectionFailover runs two replicas of the binary against a real kube-apiserver and one
// Waldur with 200 orders. Only the leader touches Waldur; when it is SIGKILLed half-way the
// standby takes over within the lease duration and finishes; every order is done exactly once
// and every backend object created exactly once.
func TestLeaderElectionFailover(t *testing.T) {
	kube := kubeenv.Start(t)
	ns := kube.Namespace(t, "ha", nil)
	e := newEnv(t, waldursim.Options{}, "latency: 10ms")
	const orders = 200
	for i := 0; i < orders; i++ {
		e.world.CreateOrder(fmt.Sprintf("ha%03d", i), map[string]float64{"cpu": 1, "ram": 2})
	}
	kubeconfig := filepath.Join(e.dir, "kubeconfig")
	writeKubeconfig(t, kube, kubeconfig)
	views := map[string]*replicaView{"a": newReplicaView(t, e.sim), "b": newReplicaView(t, e.sim)}
	start := func(id string) *proc {
		cfg := filepath.Join(e.dir, id+".yaml")
		text := "heartbeat_file: " + filepath.Join(e.dir, id+".hb") + "\n" + e.world.Config(views[id].srv.URL, "state_file: "+e.state, "latency: 10ms")
		if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return e.start("-m", "all", "-c", cfg, "--period", "1s", "--listen", "127.0.0.1:0", "--leader-elect", "--kubeconfig", kubeconfig,
			"--leader-elect-resource-namespace", ns, "--leader-elect-identity", id,
			"--leader-elect-lease-duration", haLease.String(), "--leader-elect-renew-deadline", haRenew.String(),
			"--leader-elect-retry-period", haRetry.String())
	}
	a := start("a")
	waitFor(t, 20*time.Second, "replica a to lead and work", func() bool { n, _ := views["a"].requests(time.Time{}, time.Now()); return n > 0 })
	b := start("b")
	waitFor(t, 10*time.Second, "replica b to see a as leader", func() bool {
		return strings.Contains(probe(t, b, "/readyz"), "standby b, leader a")
	})
	statusShowsStandby(t, b)
	standbyReloads(t, b, filepath.Join(e.dir, "b.yaml"))
	done := func() int { return e.orderStates()[waldursim.OrderDone] }
	waitFor(t, 60*time.Second, "half of the orders", func() bool { return done() >= orders/2 })
	killed := time.Now()
	if err := syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.exited
	atKill := done()
	if n, _ := views["b"].requests(time.Time{}, killed); n != 0 {
		t.Fatalf("the standby sent %d Waldur requests while a led", n)
	}
	waitFor(t, 60*time.Second, "all orders done", func() bool { return done() == orders })
	_, first := views["b"].requests(killed, time.Now())
	takeover := first.Sub(killed)
	t.Logf("leader SIGKILLed with %d/%d orders done; standby's first Waldur request %s later (lease %s, renew deadline %s, retry %s)",
		atKill, orders, takeover.Round(time.Millisecond), haLease, haRenew, haRetry)
	if takeover > haLease+3*haRetry+2*time.Second {
		t.Errorf("takeover took %s, more than the lease duration %s plus retries", takeover, haLease)
	}
	if st := probe(t, b, "/status"); !strings.Contains(st, "<b>leader</b> <code>b</code>") {
		t.Errorf("b's /status after the takeover does not show it leading")
	}
	if !strings.Contains(probe(t, b, "/readyz"), "200 ok: leader b") {
		t.Errorf("b's readiness after the takeover: %s", probe(t, b, "/readyz"))
	}
	if m := probe(t, b, "/metrics"); !strings.Contains(m, "site_agent_leader 1") || !strings.Contains(m, `site_agent_leader_changes_total{event="acquired"} 1`) {
		t.Errorf("b's metrics do not show leadership:\n%s", m)
	}
	assertExactlyOnce(t, e, views, orders)
}

// statusShowsStandby: the status page says what /readyz says: b stands by, a holds the lease
// since it took it.
func statusShowsStandby(t *testing.T, b *proc) {
	t.Helper()
	if st := probe(t, b, "/status.json"); !strings.Contains(st, `"election": true`) || !strings.Contains(st, `"leading": false`) ||
		!strings.Contains(st, `"holder": "a"`) || !strings.Contains(st, `"acquired": "`) || !strings.Contains(st, "Cloud Compute") {
		t.Errorf("b's /status.json does not show it standing by for a:\n%s", st)
	}
}

var standbyReloaded = regexp.MustCompile(`"event":"configuration reloaded"[^\n]*"role":"standby"`)

// standbyReloads: a standby applies SIGHUP at once, so a broken file is reported when it is
// sent (not at the next failover), and a good one is loaded for when it leads.
func standbyReloads(t *testing.T, p *proc, cfg string) {
	t.Helper()
	good := readFile(t, cfg)
	writeFile(t, cfg, strings.Replace(good, "accounting_type: usage", "accounting_type: sometimes", 1))
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the standby to report the broken file", func() bool {
		return strings.Contains(p.out.String(), "reload failed")
	})
	writeFile(t, cfg, good)
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the standby to load the good file", func() bool {
		return standbyReloaded.MatchString(p.out.String())
	})
}

// assertExactlyOnce checks that every order was marked done once and every object created once.
func assertExactlyOnce(t *testing.T, e *env, views map[string]*replicaView, orders int) {
	t.Helper()
	doneCalls := map[string]int{}
	for _, v := range views {
		v.mu.Lock()
		for id, n := range v.done {
			doneCalls[id] += n
		}
		v.mu.Unlock()
	}
	for _, o := range e.sim.Orders() {
		if o.State != waldursim.OrderDone {
			t.Errorf("order %s ended %s", o.UUID, o.State)
		}
		if n := doneCalls[strings.ReplaceAll(o.UUID, "-", "")]; n != 1 {
			t.Errorf("order %s marked done %d times", o.UUID, n)
		}
	}
	creates := map[string]int{}
	for _, op := range e.ops() {
		if op.Op == "create" {
			creates[op.ID]++
		}
	}
	if len(creates) != orders || len(e.objects()) != orders {
		t.Errorf("%d objects created (%d in the backend), want %d", len(creates), len(e.objects()), orders)
	}
	for id, n := range creates {
		if n != 1 {
			t.Errorf("object %s created %d times", id, n)
		}
	}
}
