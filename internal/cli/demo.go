package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/inmemory"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/scenario"
	"github.com/waldur/site-agent/internal/telemetry"
	"github.com/waldur/site-agent/internal/waldurclient/waldursim"
)

// demoCmd runs the whole loop — orders, membership, usage — against a Waldur simulator served on
// loopback, with the in-memory backend, and narrates what happens.
func demoCmd(ctx context.Context, args []string, io IO) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(io.Stderr)
	verbose := fs.Bool("v", false, "also print the agent's JSON log")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	d, err := startDemo(io.Stdout, *verbose)
	if err != nil {
		fmt.Fprintln(io.Stderr, "demo:", err)
		return ExitFailure
	}
	defer d.stop()
	if err := d.run(ctx); err != nil {
		fmt.Fprintln(io.Stderr, "demo:", err)
		return ExitFailure
	}
	return ExitOK
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
	a, err := build(d.cfg, buildOptions{mode: mode, period: time.Minute, logger: d.log,
		backendOverride: func(config.Offering) backends.Backend { return d.backend }})
	if err != nil {
		return err
	}
	defer a.close()
	before := d.world.Sim.TotalCalls()
	err = a.runOnce(ctx)
	fmt.Fprintf(d.out, "   (%s pass: %d Waldur requests)\n", mode, d.world.Sim.TotalCalls()-before)
	return err
}
