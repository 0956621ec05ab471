package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/agent"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/telemetry"
)

// spec says how a subcommand starts.
type spec struct {
	name string
	// overrides lets --listen and --log-level override the file (the run command).
	overrides bool
	// check validates the flags before the configuration is read (nil: nothing to check).
	check func(f *runFlags, io IO) error
	// warnings, when set, is shown the configuration's warnings even when it is invalid
	// (check-config lists them before the error).
	warnings func(IO, []string)
	// logTo is where the logger writes: stdout for the agent, stderr for one-off commands so
	// that their report on stdout stays readable (nil: stderr).
	logTo func(IO) io.Writer
}

// toStdout is spec.logTo for the agent itself.
func toStdout(s IO) io.Writer { return s.Stdout }

// invocation is what every subcommand has after the preamble: its flags, the loaded and
// validated configuration with its warnings, and a logger at the configured level.
type invocation struct {
	flags    runFlags
	cfg      *config.Config
	warnings []string
	log      *zap.Logger
}

// errUsage is a command-line or configuration problem: exit code 2.
type errUsage struct{ err error }

func (e errUsage) Error() string { return e.err.Error() }
func (e errUsage) Unwrap() error { return e.err }

// usageErr marks err as a usage problem (exit code 2).
func usageErr(err error) error { return errUsage{err} }

// errReported is a failure the command already told the user about: exit code 1, nothing more
// printed. errUsageReported is the same for usage problems (the flag package prints its own).
var (
	errReported      = errors.New("failed (reported above)")
	errUsageReported = errUsage{errors.New("bad usage (reported above)")}
)

// command runs one subcommand: the preamble (flags, configuration, logger), then body, and
// maps the outcome to an exit code.
func command(ctx context.Context, s spec, args []string, io IO, body func(context.Context, *invocation) error) int {
	inv, err := preamble(s, args, io)
	if err == nil {
		err = body(ctx, inv)
	}
	return exitCode(io, err)
}

// exitCode maps a command's outcome: nil → 0; a usage problem (bad flags, invalid
// configuration — nothing was sent anywhere) → 2; anything else → 1. Problems not yet shown
// are printed once, to stderr.
func exitCode(io IO, err error) int {
	if err == nil {
		return ExitOK
	}
	code := ExitFailure
	var ue errUsage
	var ce *config.Error
	if errors.As(err, &ue) || errors.As(err, &ce) {
		code = ExitUsage
	}
	if !errors.Is(err, errReported) && !errors.Is(err, errUsageReported) {
		fmt.Fprintln(io.Stderr, "site-agent:", err)
	}
	return code
}

// preamble parses the common flags, loads and validates the configuration (secret references
// resolved) and builds the logger. Every error it returns is a usage problem.
func preamble(s spec, args []string, io IO) (*invocation, error) {
	fs := flag.NewFlagSet(s.name, flag.ContinueOnError)
	fs.SetOutput(io.Stderr)
	inv := &invocation{}
	inv.flags.register(fs)
	if err := fs.Parse(args); err != nil {
		return nil, errUsageReported
	}
	if fs.NArg() > 0 {
		return nil, usageErr(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if s.check != nil {
		if err := s.check(&inv.flags, io); err != nil {
			return nil, usageErr(err)
		}
	}
	var over map[string]any
	if s.overrides {
		over = inv.flags.overrides()
	}
	cfg, warnings, err := config.Load(inv.flags.configFile, config.Options{Environ: io.Environ, Overrides: over, Resolver: agent.SecretResolver})
	if s.warnings != nil {
		s.warnings(io, warnings)
	}
	if err != nil {
		return nil, usageErr(err)
	}
	w := io.Stderr
	if s.logTo != nil {
		w = s.logTo(io)
	}
	log, err := telemetry.NewLoggerFormat(w, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return nil, usageErr(fmt.Errorf("log_level: %w", err))
	}
	inv.cfg, inv.warnings, inv.log = cfg, warnings, log
	return inv, nil
}
