package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/waldur/site-agent/internal/clients/vault"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/modes"
	"github.com/waldur/site-agent/internal/telemetry"
)

// secretResolver resolves vault: references in the configuration (through the top-level vault
// section); a nil resolver would refuse references with a message naming the key.
func secretResolver(section map[string]any) (config.Resolver, error) {
	r, err := vault.NewResolver(section)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return r, nil
}

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
		opts := buildOptions{mode: f.mode, dryRun: f.dryRun, periods: f.periods, warnings: inv.warnings, stdout: io.Stdout,
			metrics: telemetry.NewMetrics(), logger: inv.log}
		a, err := build(inv.cfg, opts)
		if err != nil {
			return usageErr(err)
		}
		el, err := newElector(inv.cfg, a)
		if err != nil {
			a.close()
			return usageErr(err)
		}
		if f.once {
			defer a.close()
			return a.runOnce(ctx)
		}
		opts.logger = nil // a reload builds the logger of the new configuration
		return serve(ctx, a, reloader(f, opts, io), el)
	})
}

// checkRun validates the run flags before the configuration is read: the mode, the period of
// every mode it runs, and --once without leader election.
func checkRun(f *runFlags, io IO) error {
	periods, err := modePeriods(*f, io.Environ)
	if err != nil {
		return err
	}
	if f.once && f.leader.requested() {
		return errors.New("--once cannot be combined with leader election (a single pass needs no lease)")
	}
	f.periods = periods
	return nil
}

// modePeriods checks the mode and resolves the period of every mode it runs, before the
// configuration is read.
func modePeriods(f runFlags, environ func() []string) (map[string]time.Duration, error) {
	var specs []modes.Spec
	switch spec, ok := modes.Lookup(f.mode); {
	case f.mode == modes.ModeAll:
		specs = modes.Specs()
	case ok:
		specs = []modes.Spec{spec}
	default:
		return nil, fmt.Errorf("unknown mode %q (choose %s or all)", f.mode, strings.Join(modes.Names(), ", "))
	}
	periods := map[string]time.Duration{}
	for _, spec := range specs {
		p, err := resolvePeriod(spec, f.period, environ)
		if err != nil {
			return nil, err
		}
		periods[spec.Name] = p
	}
	return periods, nil
}

func resolvePeriod(spec modes.Spec, flagValue time.Duration, environ func() []string) (time.Duration, error) {
	if flagValue < 0 {
		return 0, errors.New("--period must be positive")
	}
	if flagValue > 0 {
		return flagValue, nil
	}
	name := spec.PeriodEnv
	for _, kv := range environ() {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			minutes, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || minutes <= 0 || minutes > 60*24*31 {
				return 0, fmt.Errorf("%s must be a positive number of minutes, got %q", name, v)
			}
			return time.Duration(minutes * float64(time.Minute)), nil
		}
	}
	return spec.Period, nil
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
