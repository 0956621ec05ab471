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
	"github.com/waldur/site-agent/internal/telemetry"
)

// secretResolver resolves vault: references in the configuration (through the top-level vault
// section); a nil resolver would refuse references with a message naming the key.
var secretResolver config.NewResolver = vault.NewResolver

// modes lists the runnable modes and the incumbent's default period of each.
var modePeriods = map[string]time.Duration{
	"order_process":   5 * time.Minute,
	"membership_sync": 5 * time.Minute,
	"report":          30 * time.Minute,
}

// periodEnv is the incumbent's environment variable for a mode's period, in (fractional) minutes.
func periodEnv(mode string) string {
	return "WALDUR_SITE_AGENT_" + strings.ToUpper(mode) + "_PERIOD_MINUTES"
}

type runFlags struct {
	mode, configFile, listen, logLevel string
	once, dryRun                       bool
	period                             time.Duration
}

func (f *runFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.mode, "m", "order_process", "mode: order_process, membership_sync or report")
	fs.StringVar(&f.mode, "mode", "order_process", "same as -m")
	fs.StringVar(&f.configFile, "c", "waldur-site-agent-config.yaml", "configuration file")
	fs.StringVar(&f.configFile, "config-file", "waldur-site-agent-config.yaml", "same as -c")
	fs.BoolVar(&f.once, "once", false, "run one cycle and exit; the exit code says whether it succeeded")
	fs.BoolVar(&f.dryRun, "dry-run", false, "read Waldur and backends but change nothing")
	fs.StringVar(&f.listen, "listen", "", "serve /metrics, /healthz and /readyz on this address (overrides listen_address)")
	fs.StringVar(&f.logLevel, "log-level", "", "override log_level (debug, info, warning, error)")
	fs.DurationVar(&f.period, "period", 0, "override the cycle period (e.g. 30s); default from "+periodEnv("MODE"))
}

func runCmd(ctx context.Context, args []string, io IO) int {
	fs := flag.NewFlagSet("site-agent", flag.ContinueOnError)
	fs.SetOutput(io.Stderr)
	var f runFlags
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(io.Stderr, "site-agent: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	if f.mode == "event_process" {
		fmt.Fprintln(io.Stderr, "site-agent: mode event_process is not implemented yet; run order_process and membership_sync instead")
		return ExitUsage
	}
	def, ok := modePeriods[f.mode]
	if !ok {
		fmt.Fprintf(io.Stderr, "site-agent: unknown mode %q (choose order_process, membership_sync or report)\n", f.mode)
		return ExitUsage
	}
	period, err := resolvePeriod(f.mode, def, f.period, io.Environ)
	if err != nil {
		fmt.Fprintln(io.Stderr, "site-agent:", err)
		return ExitUsage
	}
	cfg, warnings, code := loadConfig(f.configFile, overrides(f.listen, f.logLevel), io)
	if code != ExitOK {
		return code
	}
	opts := buildOptions{mode: f.mode, dryRun: f.dryRun, period: period, warnings: warnings, stdout: io.Stdout,
		metrics: telemetry.NewMetrics()}
	a, err := build(cfg, opts)
	if err != nil {
		fmt.Fprintln(io.Stderr, "site-agent:", err)
		return ExitUsage
	}
	if f.once {
		defer a.close()
		if err := a.runOnce(ctx); err != nil {
			fmt.Fprintln(io.Stderr, "site-agent:", err)
			return ExitFailure
		}
		return ExitOK
	}
	if err := serve(ctx, a, reloader(f, opts, io)); err != nil {
		fmt.Fprintln(io.Stderr, "site-agent:", err)
		return ExitFailure
	}
	return ExitOK
}

func resolvePeriod(mode string, def, flagValue time.Duration, environ func() []string) (time.Duration, error) {
	if flagValue < 0 {
		return 0, errors.New("--period must be positive")
	}
	if flagValue > 0 {
		return flagValue, nil
	}
	name := periodEnv(mode)
	for _, kv := range environ() {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			minutes, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || minutes <= 0 || minutes > 60*24*31 {
				return 0, fmt.Errorf("%s must be a positive number of minutes, got %q", name, v)
			}
			return time.Duration(minutes * float64(time.Minute)), nil
		}
	}
	return def, nil
}

func overrides(listen, logLevel string) map[string]any {
	o := map[string]any{}
	if listen != "" {
		o["listen_address"] = listen
	}
	if logLevel != "" {
		o["log_level"] = logLevel
	}
	return o
}

// loadConfig loads and validates the file; problems are printed and mapped to ExitUsage.
func loadConfig(path string, over map[string]any, io IO) (*config.Config, []string, int) {
	cfg, warnings, err := config.Load(path, config.Options{Environ: io.Environ, Overrides: over, Resolver: secretResolver})
	if err != nil {
		fmt.Fprintln(io.Stderr, "site-agent:", err)
		return nil, warnings, ExitUsage
	}
	return cfg, warnings, ExitOK
}
