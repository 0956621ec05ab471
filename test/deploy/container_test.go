package deploy

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// podmanRun are the flags that start containers on these machines: runc (crun cannot), explicit
// ulimits (podman's defaults are refused), host networking to reach the loopback simulator;
// read-only root file system and the non-root user are what the test is about.
var podmanRun = []string{"run", "--runtime", "runc", "--network", "host", "--read-only", "--user", "65532",
	"--ulimit", "nofile=8192:8192", "--ulimit", "nproc=4096:4096"}

// firstRequest records when the simulator is first asked anything.
type firstRequest struct {
	h    http.Handler
	once sync.Once
	at   chan time.Time
}

func (f *firstRequest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.once.Do(func() { f.at <- time.Now() })
	f.h.ServeHTTP(w, r)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestContainerRunsAllModes runs the image read-only and non-root with `-m all` against the
// simulator (three offerings): orders are done and usage reported, healthz works as the
// container's health check and as a readiness command, and SIGTERM (podman stop) stops it cleanly.
func TestContainerRunsAllModes(t *testing.T) {
	image := need(t, "SITE_AGENT_IMAGE", "build it with scripts/container/build.sh")
	sim := waldursim.New(waldursim.Options{Token: scenario.Token})
	fr := &firstRequest{h: sim, at: make(chan time.Time, 1)}
	srv := httptest.NewServer(fr)
	defer srv.Close()
	w := scenario.New(sim, scenario.Options{Users: 2})
	offs := []waldursim.Offering{w.Offering, w.AddOffering("HPC Storage"), w.AddOffering("GPU Pool")}
	for i, off := range offs {
		for j := 0; j < 3; j++ {
			w.CreateOrderIn(off, fmt.Sprintf("c%d-%d", i, j), map[string]float64{"cpu": 1, "ram": 2})
		}
	}
	dir := t.TempDir()
	cfg := w.ConfigAll(srv.URL, offs, func(int) []string { return []string{"usage_fraction: 0.5"} })
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("site-agent-test-%d", os.Getpid())
	port := freePort(t)
	_, _ = run(t, "podman", "rm", "-f", name)
	t.Cleanup(func() { _, _ = run(t, "podman", "rm", "-f", name) })
	args := append(append([]string{}, podmanRun...), "-d", "--name", name,
		"-v", dir+":/etc/waldur-site-agent:ro",
		"--health-cmd", `["/usr/local/bin/site-agent","healthz","--liveness-only"]`, "--health-interval", "disable",
		image, "-m", "all", "-c", "/etc/waldur-site-agent/config.yaml", "--period", "1s",
		"--listen", "127.0.0.1:"+strconv.Itoa(port))
	started := time.Now()
	must(t, "podman", args...)
	select {
	case at := <-fr.at:
		t.Logf("container start → first Waldur request: %s", at.Sub(started).Round(time.Millisecond))
	case <-time.After(30 * time.Second):
		logs, _ := run(t, "podman", "logs", name)
		t.Fatalf("no request from the container within 30 s:\n%s", logs)
	}
	waitFor(t, 30*time.Second, "all orders done and usage reported", func() bool {
		for _, o := range sim.Orders() {
			if o.State != waldursim.OrderDone {
				return false
			}
		}
		for _, r := range sim.Resources() {
			if len(sim.ComponentUsages(r.UUID)) == 0 {
				return false
			}
		}
		return true
	})
	checkContainer(t, name, port)
	stopContainer(t, name)
	sim.AssertNoViolations(t)
}

// checkContainer checks the user, the read-only root, the health check and the probes.
func checkContainer(t *testing.T, name string, port int) {
	t.Helper()
	if got := strings.TrimSpace(must(t, "podman", "inspect", "--format", "{{.Config.User}} {{.HostConfig.ReadonlyRootfs}}", name)); got != "65532 true" {
		t.Errorf("user and read-only root: %q, want \"65532 true\"", got)
	}
	if out, code := run(t, "podman", "healthcheck", "run", name); code != 0 {
		t.Errorf("podman healthcheck run: exit %d\n%s", code, out)
	}
	if out, code := run(t, "podman", "exec", name, "/usr/local/bin/site-agent", "healthz", "-c", "/etc/waldur-site-agent/config.yaml"); code != 0 {
		t.Errorf("healthz with the configuration (authenticated Waldur call): exit %d\n%s", code, out)
	}
	// The incumbent's names are links in the image (the incumbent chart's exec probes call them).
	if out, code := run(t, "podman", "exec", name, "waldur_site_healthz", "--config-file", "/etc/waldur-site-agent/config.yaml"); code != 0 {
		t.Errorf("waldur_site_healthz (the incumbent's name): exit %d\n%s", code, out)
	}
	if out, code := run(t, "podman", "exec", name, "waldur_site_diagnostics", "--help"); code != 0 || !strings.Contains(out, "waldur_site_diagnostics") {
		t.Errorf("waldur_site_diagnostics --help: exit %d\n%s", code, out)
	}
	if out, code := run(t, "podman", "exec", name, "/usr/local/bin/site-agent", "healthz", "--liveness-only", "--max-age", "0"); code == 0 {
		t.Errorf("healthz must fail for a heartbeat older than --max-age 0:\n%s", out)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", port, path))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s = %d %s", path, resp.StatusCode, body)
		}
	}
}

// stopContainer sends SIGTERM through podman stop and expects a clean exit well before podman
// would resort to SIGKILL.
func stopContainer(t *testing.T, name string) {
	t.Helper()
	start := time.Now()
	must(t, "podman", "stop", "-t", "20", name)
	took := time.Since(start)
	code := strings.TrimSpace(must(t, "podman", "inspect", "--format", "{{.State.ExitCode}}", name))
	logs, _ := run(t, "podman", "logs", name)
	t.Logf("podman stop (SIGTERM) → exited with %s after %s", code, took.Round(time.Millisecond))
	if code != "0" || !strings.Contains(logs, `"event":"agent stopped"`) {
		t.Fatalf("container exit code %s after SIGTERM; logs:\n%s", code, logs)
	}
	if took > 15*time.Second {
		t.Fatalf("stop took %s: SIGTERM was not honoured", took)
	}
}
