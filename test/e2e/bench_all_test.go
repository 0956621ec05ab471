package e2e

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// idleWindow is how long idle CPU is sampled.
const idleWindow = 20 * time.Second

// BenchmarkAllModesIdle measures `-m all` with three offerings (20 resources each, in an
// in-memory backend with a state file) once its first cycles are done and it idles at the default periods: CPU use, RSS, and Waldur requests while
// idle; and, for comparison, the summed RSS of the three separate mode processes on the same
// world.
func BenchmarkAllModesIdle(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sim, cfg := benchAllWorld(b)
		cmd := exec.Command(binary, "-m", "all", "-c", cfg)
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		settle(b, sim)
		calls := sim.TotalCalls()
		cpu := cpuShare(b, cmd.Process.Pid, idleWindow)
		b.ReportMetric(cpu*100, "%CPU-idle(all)")
		b.ReportMetric(kib(b, cmd.Process.Pid, "VmRSS")/1024, "MiB-RSS-idle(all)")
		b.ReportMetric(kib(b, cmd.Process.Pid, "VmHWM")/1024, "MiB-peak-RSS(all)")
		b.ReportMetric(float64(sim.TotalCalls()-calls), "waldur-req-idle-20s(all)")
		_ = cmd.Process.Kill()
		_ = cmd.Wait()

		sim, cfg = benchAllWorld(b)
		var sum float64
		var procs []*exec.Cmd
		for _, mode := range []string{"order_process", "membership_sync", "report"} {
			c := exec.Command(binary, "-m", mode, "-c", cfg)
			if err := c.Start(); err != nil {
				b.Fatal(err)
			}
			procs = append(procs, c)
		}
		settle(b, sim)
		for _, c := range procs {
			sum += kib(b, c.Process.Pid, "VmRSS") / 1024
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		b.ReportMetric(sum, "MiB-RSS-idle(3-processes)")
	}
}

func benchAllWorld(b *testing.B) (*waldursim.Server, string) {
	sim := waldursim.New(waldursim.Options{Token: scenario.Token, Latency: time.Millisecond, ValidateResponses: waldursim.Bool(false)})
	srv := httptest.NewServer(sim)
	b.Cleanup(srv.Close)
	w := scenario.New(sim, scenario.Options{Users: 3})
	offs := []waldursim.Offering{w.Offering, w.AddOffering("HPC Storage"), w.AddOffering("GPU Pool")}
	dir := b.TempDir()
	for i, off := range offs {
		for j := 0; j < 20; j++ {
			w.CreateOrderIn(off, fmt.Sprintf("i%d-%02d", i, j), map[string]float64{"cpu": 1, "ram": 2})
		}
	}
	text := "heartbeat_file: " + filepath.Join(dir, "hb") + "\n" +
		strings.Replace(w.ConfigAll(srv.URL, offs, func(i int) []string {
			return []string{"usage_fraction: 0.5", fmt.Sprintf("state_file: %s/backend-%d.json", dir, i)} // shared by separate processes
		}), "log_level: INFO", "log_level: WARNING", 1)
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		b.Fatal(err)
	}
	// The resources exist before the measured processes start, so their first membership and
	// report cycles have the 60 resources to work on.
	if out, err := exec.Command(binary, "-m", "order_process", "-c", cfg, "--once").CombinedOutput(); err != nil {
		b.Fatalf("creating the resources: %v\n%s", err, out)
	}
	return sim, cfg
}

func waitDone(b *testing.B, sim *waldursim.Server) {
	deadline := time.Now().Add(time.Minute)
	for {
		done := 0
		for _, o := range sim.Orders() {
			if o.State == waldursim.OrderDone {
				done++
			}
		}
		if done == len(sim.Orders()) {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d orders done", done, len(sim.Orders()))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// settle waits until every order is done and every resource has usage, then until no request
// arrived for a second (the first cycles are over).
func settle(b *testing.B, sim *waldursim.Server) {
	waitDone(b, sim)
	deadline := time.Now().Add(time.Minute)
	for {
		reported := true
		for _, r := range sim.Resources() {
			reported = reported && len(sim.ComponentUsages(r.UUID)) > 0
		}
		if reported {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("usage not reported")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for last := -1; last != sim.TotalCalls(); time.Sleep(time.Second) {
		last = sim.TotalCalls()
	}
}

// cpuShare samples /proc/PID/stat and returns the CPU used over window as a share of one core.
func cpuShare(b *testing.B, pid int, window time.Duration) float64 {
	ticks := func() float64 {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			b.Fatal(err)
		}
		f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
		ut, _ := strconv.ParseFloat(f[11], 64) // utime is field 14, stime 15 (1-based, with pid and comm)
		st, _ := strconv.ParseFloat(f[12], 64)
		return ut + st
	}
	start, t0 := ticks(), time.Now()
	time.Sleep(window)
	return (ticks() - start) / 100 / time.Since(t0).Seconds() // USER_HZ is 100 on Linux
}
