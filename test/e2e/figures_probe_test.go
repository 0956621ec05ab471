package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends/inmemory"
	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// clock wraps simulators to record, across all of them, when the first request arrived and
// when the last answer was written, and to count requests per simulator.
type clock struct {
	mu          sync.Mutex
	first, last time.Time
	arrived     chan struct{} // closed by the first request
	counts      map[string]int
}

func newClock() *clock { c := &clock{}; c.reset(); return c }

func (c *clock) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.first, c.last, c.arrived, c.counts = time.Time{}, time.Time{}, make(chan struct{}), map[string]int{}
}

func (c *clock) wrap(name string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		c.mu.Lock()
		if c.first.IsZero() {
			c.first = now
			close(c.arrived)
		}
		c.counts[name]++
		c.mu.Unlock()
		h.ServeHTTP(w, r)
		now = time.Now()
		c.mu.Lock()
		if now.After(c.last) {
			c.last = now
		}
		c.mu.Unlock()
	})
}

func (c *clock) times() (first, last time.Time, counts map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	counts = map[string]int{}
	for k, v := range c.counts {
		counts[k] = v
	}
	return c.first, c.last, counts
}

// buildRelease builds the binary as `make build` does (static, stripped, -trimpath).
func buildRelease(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "site-agent")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "github.com/waldur/site-agent/cmd/site-agent")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("building the release binary: %v", err)
	}
	return bin
}

// runStat is one finished run of the binary.
type runStat struct {
	wall    time.Duration // launch → exit
	cpu     time.Duration // user + system time of the agent
	maxRSS  float64       // MiB: the last VmHWM read while it ran (polled every 5 ms)
	started time.Time
}

// runOnce runs the binary to completion and fails the benchmark on a non-zero exit. Peak RSS is
// read from /proc while it runs: the rusage of a child also counts the parent's pages it
// shared before exec.
func runOnce(b *testing.B, bin string, args ...string) runStat {
	b.Helper()
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	peak := make(chan float64, 1)
	go func() {
		hwm := 0.0
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if v, ok := readHWM(cmd.Process.Pid); ok {
				hwm = max(hwm, v)
			}
			select {
			case <-done:
				peak <- hwm
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	wall := time.Since(start)
	close(done)
	if err != nil {
		b.Fatalf("%v: %v\n%s", args, err, stderr.String())
	}
	st := cmd.ProcessState
	return runStat{wall: wall, cpu: st.UserTime() + st.SystemTime(), maxRSS: <-peak, started: start}
}

// readHWM reads VmHWM of a running process in MiB.
func readHWM(pid int) (float64, bool) { return statusMiB(pid, "VmHWM") }

// inmemoryWorld is a Waldur simulator with 1 ms latency per request behind a clock, seeded
// with the scenario world, and a configuration for the in-memory backend.
type inmemoryWorld struct {
	world  *scenario.World
	clock  *clock
	dir    string
	config string
}

func newInmemoryWorld(b *testing.B, settings ...string) *inmemoryWorld {
	b.Helper()
	sim := waldursim.New(waldursim.Options{Token: scenario.Token, Latency: time.Millisecond, ValidateResponses: waldursim.Bool(false)})
	w := &inmemoryWorld{world: scenario.New(sim, scenario.Options{Users: 3}), clock: newClock(), dir: b.TempDir()}
	srv := httptest.NewServer(w.clock.wrap("waldur", sim))
	b.Cleanup(srv.Close)
	w.config = filepath.Join(w.dir, "config.yaml")
	text := "heartbeat_file: " + filepath.Join(w.dir, "heartbeat") + "\n" + w.world.Config(srv.URL, settings...)
	if err := os.WriteFile(w.config, []byte(text), 0o600); err != nil {
		b.Fatal(err)
	}
	return w
}

func (w *inmemoryWorld) done() int {
	n := 0
	for _, o := range w.world.Sim.Orders() {
		if o.State == waldursim.OrderDone {
			n++
		}
	}
	return n
}

// seedResources adds n OK resources with backend ids to Waldur and writes the in-memory
// backend's state file with their objects (the format the backend shares between processes).
func (w *inmemoryWorld) seedResources(b *testing.B, n int, stateFile string) {
	b.Helper()
	objects := map[string]inmemory.Object{}
	now := time.Now().UTC()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("res-%05d", i)
		id := "phys_" + name
		limits := map[string]float64{"cpu": 2, "ram": 8}
		r := w.world.Sim.AddResource(waldursim.Resource{Name: name, Slug: name, OfferingUUID: w.world.Offering.UUID,
			ProjectUUID: w.world.Project.UUID, PlanUUID: w.world.Plan.UUID, BackendID: id, Limits: limits})
		objects[id] = inmemory.Object{ID: id, ResourceUUID: strings.ReplaceAll(r.UUID, "-", ""), Description: name,
			Limits: limits, Created: now}
	}
	data, err := json.Marshal(map[string]any{"objects": objects, "ops": []any{}})
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(stateFile, data, 0o600); err != nil {
		b.Fatal(err)
	}
}

// procStatus reads VmXXX lines of /proc/PID/status, in MiB.
func procStatus(b *testing.B, pid int, keys ...string) []float64 {
	b.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	found := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
		if err == nil {
			found[k] = n / 1024
		}
	}
	out := make([]float64, len(keys))
	for i, k := range keys {
		v, ok := found[k]
		if !ok {
			b.Fatalf("%s not in /proc/%d/status", k, pid)
		}
		out[i] = v
	}
	return out
}

// kib reads a VmXXX line of /proc/PID/status in KiB.
func kib(b *testing.B, pid int, key string) float64 { return procStatus(b, pid, key)[0] * 1024 }
