package cli

import (
	"context"
	"errors"
	"flag"
	"strings"
	"time"

	"github.com/waldur/site-agent/internal/agent"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/modes"
	"github.com/waldur/site-agent/internal/telemetry"
)

type runFlags struct {
	mode, configFile, listen, logLevel string
	once, dryRun                       bool
	period                             time.Duration
	leader                             leaderFlags
	periods                            map[string]time.Duration // of every mode run, resolved by checkRun
}

func (f *runFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.mode, "m", modes.ModeOrderProcess, "mode: "+strings.Join(modes.Names(), ", ")+", or all (every mode the offerings configure)")
	fs.StringVar(&f.mode, "mode", modes.ModeOrderProcess, "same as -m")
	fs.StringVar(&f.configFile, "c", "waldur-site-agent-config.yaml", "configuration file")
	fs.StringVar(&f.configFile, "config-file", "waldur-site-agent-config.yaml", "same as -c")
	fs.BoolVar(&f.once, "once", false, "run one cycle and exit; the exit code says whether it succeeded")
	fs.BoolVar(&f.dryRun, "dry-run", false, "read Waldur and backends but change nothing")
	fs.StringVar(&f.listen, "listen", "", "serve /metrics, /healthz and /readyz on this address (overrides listen_address)")
	fs.StringVar(&f.logLevel, "log-level", "", "override log_level (debug, info, warning, error)")
	fs.DurationVar(&f.period, "period", 0, "override the cycle period of every mode (e.g. 30s); default from WALDUR_SITE_AGENT_MODE_PERIOD_MINUTES")
	f.leader.register(fs)
}

func runCmd(ctx context.Context, args []string, io IO) int {
	s := spec{name: "site-agent", overrides: true, check: checkRun, logTo: toStdout}
	return command(ctx, s, args, io, func(ctx context.Context, inv *invocation) error {
		f := inv.flags
		opts := agent.Options{Mode: f.mode, DryRun: f.dryRun, Periods: f.periods, Warnings: inv.warnings, Stdout: io.Stdout,
			Metrics: telemetry.NewMetrics(), Status: telemetry.NewStatus(Version), Logger: inv.log, Version: Version}
		a, err := agent.Build(inv.cfg, opts)
		if err != nil {
			return usageErr(err)
		}
		el, err := agent.NewElector(inv.cfg, a)
		if err != nil {
			a.Close()
			return usageErr(err)
		}
		if f.once {
			defer a.Close()
			return a.RunOnce(ctx)
		}
		opts.Logger = nil // a reload builds the logger of the new configuration
		return agent.Supervise(ctx, a, reloader(f, opts, io), el)
	})
}

// reloader returns a function that loads the configuration again and builds a fresh agent.
func reloader(f runFlags, o agent.Options, io IO) func() (*agent.Agent, error) {
	return func() (*agent.Agent, error) {
		cfg, warnings, err := config.Load(f.configFile, config.Options{Environ: io.Environ, Overrides: f.overrides(), Resolver: agent.SecretResolver})
		if err != nil {
			return nil, err
		}
		o.Warnings = warnings
		return agent.Build(cfg, o)
	}
}

// checkRun validates the run flags before the configuration is read: the mode, the period of
// every mode it runs, and --once without leader election.
func checkRun(f *runFlags, io IO) error {
	periods, err := agent.Periods(f.mode, f.period, io.Environ)
	if err != nil {
		return err
	}
	if f.once && f.leader.requested() {
		return errors.New("--once cannot be combined with leader election (a single pass needs no lease)")
	}
	f.periods = periods
	return nil
}

// overrides are the configuration keys set by flags.
func (f runFlags) overrides() map[string]any {
	o := map[string]any{}
	if f.listen != "" {
		o["listen_address"] = f.listen
	}
	if f.logLevel != "" {
		o["log_level"] = f.logLevel
	}
	if le := f.leader.overrides(); len(le) > 0 {
		o["leader_election"] = le
	}
	return o
}
