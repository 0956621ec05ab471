package e2e

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkFigures measures the footprint and throughput figures of the README on a release
// build of the binary (static, stripped) run as a process against loopback simulators, and
// prints them as one table. It reports numbers and asserts none of them: `make bench`.
// SITE_AGENT_FIGURES=launch,drain,report,rancher,rke2,diagnostics selects groups (default all); the Rancher
// group needs the real-server tier (a kube-apiserver) and says so in the table otherwise; the
// rke2 group runs against the rke2 world's simulators and node emulator (figures_rke2_test.go).
//
// The simulators run in this process on the same cores as the agent, so every wall time
// includes their work; the agent's own CPU time is reported beside it.
func BenchmarkFigures(b *testing.B) {
	bin := buildRelease(b)
	t := &table{b: b, loadBefore: loadavg()}
	want := func(name string) bool {
		sel := os.Getenv("SITE_AGENT_FIGURES")
		return sel == "" || slices.Contains(strings.Split(sel, ","), name)
	}
	for i := 0; i < b.N; i++ {
		if want("launch") {
			figureLaunch(b, bin, t)
		}
		if want("drain") {
			figureDrain(b, bin, t, 100)
			figureDrain(b, bin, t, 1000)
		}
		if want("report") {
			figureReport(b, bin, t, 10000)
		}
		if want("rancher") {
			figureRancher(b, bin, t, 100, 500)
		}
		if want("rke2") {
			figureRKE2(b, bin, t)
		}
		if want("diagnostics") {
			figureDiagnostics(b, bin, t)
		}
	}
	t.print(os.Stdout)
}

// table collects rows and reports each number as a benchmark metric too.
type table struct {
	b          *testing.B
	rows       [][3]string
	notes      []string // printed under the table
	loadBefore string
}

// note adds text printed under the table (a breakdown behind a figure).
func (t *table) note(text string) { t.notes = append(t.notes, text) }

func (t *table) add(figure, value, target string) {
	t.rows = append(t.rows, [3]string{figure, value, target})
}

func (t *table) metric(v float64, unit string) { t.b.ReportMetric(v, unit) }

func (t *table) print(w io.Writer) {
	fmt.Fprintf(w, "\n%d CPUs, load average %s before and %s after (the simulators share the CPUs with the agent)\n",
		runtime.NumCPU(), t.loadBefore, loadavg())
	fmt.Fprintf(w, "\n| figure | result | target |\n|---|---|---|\n")
	for _, r := range t.rows {
		fmt.Fprintf(w, "| %s | %s | %s |\n", r[0], r[1], r[2])
	}
	fmt.Fprintln(w)
	for _, n := range t.notes {
		fmt.Fprintf(w, "%s\n\n", n)
	}
}

// loadavg is the 1-minute load average (other work on the machine slows every figure).
func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(data))[0]
}

func msText(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// figureDrain: n Create orders pending at launch, in-memory backend, Waldur with 1 ms latency;
// time from launch until the last order is done, and Waldur requests per order (start-up
// included).
func figureDrain(b *testing.B, bin string, t *table, n int) {
	w := newInmemoryWorld(b)
	for j := 0; j < n; j++ {
		w.world.CreateOrder(fmt.Sprintf("d%04d", j), map[string]float64{"cpu": 2, "ram": 8})
	}
	w.clock.reset()
	rs := runOnce(b, bin, "-m", "order_process", "-c", w.config, "--once")
	if got := w.done(); got != n {
		b.Fatalf("%d of %d orders done", got, n)
	}
	_, last, counts := w.clock.times()
	drained := last.Sub(rs.started)
	target := map[int]string{100: "≤ 0.3 s", 1000: "≤ 2 s"}[n]
	t.add(fmt.Sprintf("%d Create orders pending at launch drained, in-memory (agent CPU, peak RSS)", n),
		fmt.Sprintf("%.3f s (%.2f s CPU, %.1f MiB)", drained.Seconds(), rs.cpu.Seconds(), rs.maxRSS), target)
	t.add(fmt.Sprintf("Waldur requests per Create order, in-memory, %d orders (start-up included)", n),
		fmt.Sprintf("%.2f", float64(counts["waldur"])/float64(n)), "≤ 5")
	t.metric(drained.Seconds(), fmt.Sprintf("s-drain-%d", n))
}

// figureReport: a report pass over n resources (in-memory backend, usage half the limits),
// Waldur with 1 ms latency: the first pass sends every usage, the second finds them unchanged.
func figureReport(b *testing.B, bin string, t *table, n int) {
	dir := b.TempDir()
	state := filepath.Join(dir, "state.json")
	w := newInmemoryWorld(b, "state_file: "+state, "usage_fraction: 0.5")
	w.seedResources(b, n, state)
	for pass, what := range []string{"usage sent", "unchanged"} {
		w.clock.reset()
		rs := runOnce(b, bin, "-m", "report", "-c", w.config, "--once")
		_, _, counts := w.clock.times()
		if pass == 0 && w.world.Sim.Calls()["marketplace_component_usages_set_usage"] < n {
			b.Fatalf("only %d usages sent", w.world.Sim.Calls()["marketplace_component_usages_set_usage"])
		}
		t.add(fmt.Sprintf("report pass over %s resources, 1 ms latency, %s (agent CPU, peak RSS; Waldur requests)", thousands(n), what),
			fmt.Sprintf("%.2f s (%.2f s CPU, %.1f MiB; %d)", rs.wall.Seconds(), rs.cpu.Seconds(), rs.maxRSS, counts["waldur"]), "≤ 60 s")
		t.metric(rs.wall.Seconds(), fmt.Sprintf("s-report-%d-pass%d", n, pass+1))
	}
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	var parts []string
	for len(s) > 3 {
		parts = append([]string{s[len(s)-3:]}, parts...)
		s = s[:len(s)-3]
	}
	return strings.Join(append([]string{s}, parts...), ",")
}
