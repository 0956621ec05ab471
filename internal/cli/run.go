package cli

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/spf13/cobra"

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

// register adds the agent's flags to cmd: the incumbent's -m/--mode and -c/--config-file
// (waldur_site_agent.common.utils.init_configuration), and site-agent's own.
func (f *runFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVarP(&f.mode, "mode", "m", modes.ModeOrderProcess, "mode: "+strings.Join(modes.Names(), ", ")+", or all (every mode the offerings configure)")
	configFlag(cmd, &f.configFile, "waldur-site-agent-config.yaml")
	fs.BoolVar(&f.once, "once", false, "run one cycle and exit; the exit code says whether it succeeded")
	fs.BoolVar(&f.dryRun, "dry-run", false, "read Waldur and backends but change nothing")
	fs.StringVar(&f.listen, "listen", "", "serve /metrics, /healthz and /readyz on this address (overrides listen_address)")
	fs.StringVar(&f.logLevel, "log-level", "", "override log_level (debug, info, warning, error)")
	fs.DurationVar(&f.period, "period", 0, "override the cycle period of every mode (e.g. 30s); default from WALDUR_SITE_AGENT_<MODE>_PERIOD_MINUTES")
	f.leader.register(fs)
	modeCompletion(cmd, true)
	_ = cmd.RegisterFlagCompletionFunc("log-level", fixedCompletion("debug", "info", "warning", "error"))
}

// configFlag adds -c/--config-file (the incumbent's names) with its completion.
func configFlag(cmd *cobra.Command, p *string, def string) {
	cmd.Flags().StringVarP(p, "config-file", "c", def, "configuration file")
	_ = cmd.MarkFlagFilename("config-file", "yaml", "yml")
}

// modeCompletion completes -m with the registry's modes (and all, where it is accepted).
func modeCompletion(cmd *cobra.Command, all bool) {
	names := modes.Names()
	if all {
		names = append(names, modes.ModeAll)
	}
	_ = cmd.RegisterFlagCompletionFunc("mode", fixedCompletion(names...))
}

func fixedCompletion(values ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// runAgent runs the agent: checked flags, the loaded configuration, agent.Build (which refuses
// the configuration with every problem it has), then one pass (--once) or supervision.
func (a *app) runAgent(ctx context.Context, f *runFlags) int {
	io := a.io
	if err := checkRun(f, io); err != nil {
		return exitCode(io, usageErr(err))
	}
	cfg, warnings, err := config.Load(f.configFile, config.Options{Environ: io.Environ, Overrides: f.overrides(), Resolver: agent.SecretResolver})
	if err != nil {
		return exitCode(io, err)
	}
	log, err := telemetry.NewLoggerFormat(io.Stdout, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return exitCode(io, usageErr(err))
	}
	opts := agent.Options{Mode: f.mode, DryRun: f.dryRun, Periods: f.periods, Warnings: warnings, Stdout: io.Stdout,
		Metrics: telemetry.NewMetrics(), Status: telemetry.NewStatus(Version), Logger: log, Version: Version}
	ag, err := agent.Build(cfg, opts)
	if err != nil {
		return exitCode(io, usageErr(err))
	}
	el, err := agent.NewElector(cfg, ag)
	if err != nil {
		ag.Close()
		return exitCode(io, usageErr(err))
	}
	if f.once {
		defer ag.Close()
		return exitCode(io, ag.RunOnce(ctx))
	}
	opts.Logger = nil // a reload builds the logger of the new configuration
	return exitCode(io, agent.Supervise(ctx, ag, reloader(*f, opts, io), el))
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
