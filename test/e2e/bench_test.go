package e2e

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// BenchmarkBinary measures the built binary as a process against the simulator (1 ms latency):
// launch → first Waldur request, peak RSS when idle, and peak RSS after draining 1,000 Create
// orders.
func BenchmarkBinary(b *testing.B) {
	b.Run("launch", benchLaunch)
	b.Run("rss", benchRSS)
}

// firstRequest wraps the simulator to record when the first request arrives.
type firstRequest struct {
	h    http.Handler
	once sync.Once
	at   chan time.Time
}

func (f *firstRequest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.once.Do(func() { f.at <- time.Now() })
	f.h.ServeHTTP(w, r)
}

func benchWorld(b *testing.B, handler func(http.Handler) http.Handler, settings ...string) (*scenario.World, string) {
	sim := waldursim.New(waldursim.Options{Token: scenario.Token, Latency: time.Millisecond, ValidateResponses: waldursim.Bool(false)})
	srv := httptest.NewServer(handler(sim))
	b.Cleanup(srv.Close)
	w := scenario.New(sim, scenario.Options{Users: 3})
	dir := b.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	text := "heartbeat_file: " + filepath.Join(dir, "hb") + "\n" + strings.Replace(w.Config(srv.URL, settings...), "log_level: INFO", "log_level: WARNING", 1)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		b.Fatal(err)
	}
	return w, cfg
}

func benchLaunch(b *testing.B) {
	var samples []time.Duration
	for i := 0; i < b.N*10; i++ {
		fr := &firstRequest{at: make(chan time.Time, 1)}
		_, cfg := benchWorld(b, func(h http.Handler) http.Handler { fr.h = h; return fr })
		cmd := exec.Command(binary, "-m", "order_process", "-c", cfg, "--period", "1h")
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		select {
		case at := <-fr.at:
			samples = append(samples, at.Sub(start))
		case <-time.After(10 * time.Second):
			b.Fatal("no request within 10 s")
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "ms-to-first-request(median)")
	b.ReportMetric(float64(samples[len(samples)-1].Microseconds())/1000, "ms-to-first-request(max)")
}

func benchRSS(b *testing.B) {
	for i := 0; i < b.N; i++ {
		w, cfg := benchWorld(b, func(h http.Handler) http.Handler { return h })
		cmd := exec.Command(binary, "-m", "order_process", "-c", cfg, "--period", "300ms")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		waitCalls(b, w, "marketplace_orders_list", 3) // idle cycles
		b.ReportMetric(kib(b, cmd.Process.Pid, "VmHWM")/1024, "MiB-peak-RSS-idle")
		for j := 0; j < 1000; j++ {
			w.CreateOrder(fmt.Sprintf("b%04d", j), map[string]float64{"cpu": 1})
		}
		start := time.Now()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			done := 0
			for _, o := range w.Sim.Orders() {
				if o.State == waldursim.OrderDone {
					done++
				}
			}
			if done == 1000 {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("only %d orders done", done)
			}
			time.Sleep(20 * time.Millisecond)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s-drain-1000(binary)")
		b.ReportMetric(kib(b, cmd.Process.Pid, "VmHWM")/1024, "MiB-peak-RSS-after-1000")
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}

func waitCalls(b *testing.B, w *scenario.World, op string, n int) {
	deadline := time.Now().Add(30 * time.Second)
	for w.Sim.Calls()[op] < n {
		if time.Now().After(deadline) {
			b.Fatalf("%s not called %d times", op, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// kib reads a VmXXX line of /proc/PID/status.
func kib(b *testing.B, pid int, key string) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatalf("%s not found", key)
	return 0
}
