package agent

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/inmemory"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/modes"
	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// benchWorld is a simulator with 1 ms added latency per request, served over loopback HTTP, and
// an agent configuration for it.
type benchWorld struct {
	world *scenario.World
	cfg   *config.Config
	be    *inmemory.Backend
}

func newBenchWorld(b *testing.B, concurrency int) *benchWorld {
	sim := waldursim.New(waldursim.Options{Token: scenario.Token, Latency: time.Millisecond, ValidateResponses: waldursim.Bool(false)})
	srv := httptest.NewServer(sim)
	b.Cleanup(srv.Close)
	w := scenario.New(sim, scenario.Options{Users: 3})
	cfg, _, err := config.Parse("bench.yaml", []byte(w.Config(srv.URL)), config.Options{Environ: func() []string { return nil }})
	if err != nil {
		b.Fatal(err)
	}
	cfg.Concurrency, cfg.HeartbeatFile, cfg.LogLevel = concurrency, "", "error"
	off := cfg.Offerings[0]
	be := inmemory.NewBackend(inmemory.Settings{}, off.Components, nil)
	return &benchWorld{world: w, cfg: cfg, be: be}
}

func (bw *benchWorld) agent(b *testing.B, mode string) *Agent {
	a, err := Build(bw.cfg, Options{Mode: mode, Period: time.Minute, Stdout: io.Discard,
		BackendOverride: func(config.Offering) backends.Backend { return bw.be }})
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// BenchmarkCreateOrders drains a backlog of 1,000 Create orders per iteration and reports Waldur
// requests per order (amortised, registration excluded) and throughput. The simulator runs in
// the same process on the same two cores, so the agent's memory is measured on the binary
// instead (test/e2e BenchmarkBinary).
func BenchmarkCreateOrders(b *testing.B) {
	for _, conc := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			const backlog = 1000
			var reqs, orders int
			var elapsed time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				bw := newBenchWorld(b, conc)
				for j := 0; j < backlog; j++ {
					bw.world.CreateOrder(fmt.Sprintf("r%04d", j), map[string]float64{"cpu": 2, "ram": 8})
				}
				a := bw.agent(b, modes.ModeOrderProcess)
				a.tasks[0].Register = nil // measured separately: once per process start
				b.StartTimer()
				start := time.Now()
				if err := a.RunOnce(context.Background()); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
				b.StopTimer()
				for _, o := range bw.world.Sim.Orders() {
					if o.State != waldursim.OrderDone {
						b.Fatalf("order %s ended %s", o.UUID, o.State)
					}
				}
				reqs += bw.world.Sim.TotalCalls()
				orders += backlog
			}
			b.ReportMetric(float64(reqs)/float64(orders), "waldur-req/order")
			b.ReportMetric(float64(orders)/elapsed.Seconds(), "orders/s")
			b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/1000-orders")
		})
	}
}

// BenchmarkIdleCycle measures an order_process cycle with nothing to do (after registration).
func BenchmarkIdleCycle(b *testing.B) {
	bw := newBenchWorld(b, 8)
	a := bw.agent(b, modes.ModeOrderProcess)
	if err := a.RunOnce(context.Background()); err != nil { // registers
		b.Fatal(err)
	}
	bw.world.Sim.ResetCalls()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := a.RunOnce(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(bw.world.Sim.TotalCalls())/float64(b.N), "waldur-req/cycle")
}

// BenchmarkMembershipPass measures a membership pass over 500 resources when nothing changed.
func BenchmarkMembershipPass(b *testing.B) {
	bw := newBenchWorld(b, 8)
	for j := 0; j < 500; j++ {
		bw.world.CreateOrder(fmt.Sprintf("m%03d", j), map[string]float64{"cpu": 1})
	}
	if err := bw.agent(b, modes.ModeOrderProcess).RunOnce(context.Background()); err != nil {
		b.Fatal(err)
	}
	a := bw.agent(b, modes.ModeMembershipSync)
	if err := a.RunOnce(context.Background()); err != nil { // first pass: metadata, last_sync
		b.Fatal(err)
	}
	bw.world.Sim.ResetCalls()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := a.RunOnce(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(bw.world.Sim.TotalCalls())/float64(b.N), "waldur-req/pass")
}

// BenchmarkReportPass measures a report pass over 500 resources whose usage is unchanged.
func BenchmarkReportPass(b *testing.B) {
	bw := newBenchWorld(b, 8)
	for j := 0; j < 500; j++ {
		bw.world.CreateOrder(fmt.Sprintf("u%03d", j), map[string]float64{"cpu": 1, "ram": 4})
	}
	bw.be = inmemory.NewBackend(inmemory.Settings{UsageFraction: 0.5}, bw.cfg.Offerings[0].Components, nil)
	if err := bw.agent(b, modes.ModeOrderProcess).RunOnce(context.Background()); err != nil {
		b.Fatal(err)
	}
	a := bw.agent(b, modes.ModeReport)
	if err := a.RunOnce(context.Background()); err != nil {
		b.Fatal(err)
	}
	bw.world.Sim.ResetCalls()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := a.RunOnce(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(bw.world.Sim.TotalCalls())/float64(b.N), "waldur-req/pass")
}
