package demo

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/agent"
	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/inmemory"
	"github.com/waldur/site-agent/internal/cli"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
	"github.com/waldur/site-agent/internal/telemetry"
)

// Command is the demo subcommand the demo program adds to the agent's command line.
var Command = cli.Command{
	Name:  "demo",
	Usage: "site-agent-demo [demo] [-v] [--serve ADDR] [--orders N]   the whole loop against a built-in Waldur simulator",
	Run:   run,
}

// run runs the whole loop — orders, membership, usage — against a Waldur simulator served on
// loopback, with the in-memory backend, and narrates what happens.
func run(ctx context.Context, args []string, io cli.IO) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(io.Stderr)
	verbose := fs.Bool("v", false, "also print the agent's JSON log")
	serve := fs.String("serve", "", "instead of the scripted demo, serve the seeded Waldur simulator on this address (e.g. 127.0.0.1:8080) until interrupted")
	orders := fs.Int("orders", 5, "with --serve: Create orders to seed")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cli.ExitOK
		}
		return cli.ExitUsage
	}
	if *serve != "" {
		return serveSimulator(ctx, *serve, *orders, io)
	}
	d, err := startDemo(io.Stdout, *verbose)
	if err != nil {
		fmt.Fprintln(io.Stderr, "demo:", err)
		return cli.ExitFailure
	}
	defer d.stop()
	if err := d.run(ctx); err != nil {
		fmt.Fprintln(io.Stderr, "demo:", err)
		return cli.ExitFailure
	}
	return cli.ExitOK
}

type demo struct {
	out     io.Writer
	world   *scenario.World
	srv     *http.Server
	url     string
	cfg     *config.Config
	backend *inmemory.Backend
	log     *zap.Logger
	start   time.Time
}

// serveSimulator runs the seeded simulator standalone and writes an agent configuration for it,
// so the real agent can be pointed at it by hand.
func serveSimulator(ctx context.Context, addr string, orders int, io cli.IO) int {
	sim := waldursim.New(waldursim.Options{Token: scenario.Token, Latency: time.Millisecond})
	w := scenario.New(sim, scenario.Options{Users: 3})
	for i := 0; i < orders; i++ {
		w.CreateOrder(fmt.Sprintf("resource-%02d", i+1), map[string]float64{"cpu": float64(2 * (i + 1)), "ram": float64(8 * (i + 1))})
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(io.Stderr, "demo:", err)
		return cli.ExitFailure
	}
	url := "http://" + l.Addr().String()
	cfgPath := filepath.Join(os.TempDir(), "site-agent-demo.yaml")
	text := w.Config(url, "state_file: "+filepath.Join(os.TempDir(), "site-agent-demo-backend.json"), "usage_fraction: 0.5", "per_user_usage: true")
	if err := os.WriteFile(cfgPath, []byte(text), 0o600); err != nil {
		fmt.Fprintln(io.Stderr, "demo:", err)
		return cli.ExitFailure
	}
	fmt.Fprintf(io.Stdout, "Waldur simulator on %s with %d pending orders (token %s).\nTry, in another terminal:\n"+
		"  go run ./cmd/site-agent -m order_process -c %s --period 10s\n  site-agent -m membership_sync -c %s --once\n  site-agent -m report -c %s --once\n"+
		"Every request is checked against Waldur's contract; violations are printed here.\n", url, orders, scenario.Token, cfgPath, cfgPath, cfgPath)
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	seen := 0
	for {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
			fmt.Fprintf(io.Stdout, "served %d requests, %d contract violations\n", sim.TotalCalls(), len(sim.Violations()))
			return cli.ExitOK
		case <-time.After(500 * time.Millisecond):
			for _, v := range sim.Violations()[seen:] {
				fmt.Fprintln(io.Stdout, "contract violation:", v)
				seen++
			}
		}
	}
}

func startDemo(out io.Writer, verbose bool) (*demo, error) {
	sim := waldursim.New(waldursim.Options{Token: scenario.Token, Latency: time.Millisecond})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	d := &demo{out: out, world: scenario.New(sim, scenario.Options{Users: 3}), url: "http://" + l.Addr().String(),
		srv: &http.Server{Handler: sim, ReadHeaderTimeout: 5 * time.Second}, log: zap.NewNop(), start: time.Now()}
	go func() { _ = d.srv.Serve(l) }()
	if verbose {
		if d.log, err = telemetry.NewLogger(out, "info"); err != nil {
			return nil, err
		}
	}
	text := d.world.Config(d.url, "usage_fraction: 0.5", "usage: {storage: 120.5}", "per_user_usage: true", "max_limits: {cpu: 64}")
	cfg, _, err := config.Parse("demo.yaml", []byte(text), config.Options{Environ: func() []string { return nil }})
	if err != nil {
		return nil, err
	}
	cfg.HeartbeatFile = ""
	d.cfg = cfg
	off := cfg.Offerings[0]
	b, _, err := inmemory.New(backends.Params{Offering: off.Name, Settings: off.BackendSettings, Components: off.Components})
	if err != nil {
		return nil, err
	}
	d.backend = b.(*inmemory.Backend)
	return d, nil
}

func (d *demo) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = d.srv.Shutdown(ctx)
}

// pass runs one cycle of a mode exactly as `site-agent -m MODE --once` would.
func (d *demo) pass(ctx context.Context, mode string) error {
	before := d.world.Sim.TotalCalls()
	err := agent.RunOnceWithBackend(ctx, d.cfg, d.backend, agent.Options{Mode: mode, Logger: d.log, Version: cli.Version})
	fmt.Fprintf(d.out, "   (%s pass: %d Waldur requests)\n", mode, d.world.Sim.TotalCalls()-before)
	return err
}
