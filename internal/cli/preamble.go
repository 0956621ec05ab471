package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/agent"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/modes"
	"github.com/waldur/site-agent/internal/telemetry"
)

// checked is a configuration as every one-off command starts from: loaded (secret references
// resolved), validated by the agent's own checks, with its warnings and a logger at its level.
type checked struct {
	cfg      *config.Config
	warnings []string // the file's and the backends'
	log      *zap.Logger
}

// loadChecked loads the file and runs the validation the agent runs before it starts
// (agent.Check over every mode the offerings configure, so that what passes here also passes
// `-m MODE`), without network calls beyond resolving secret references, which ctx bounds (30 s
// when it has no deadline). showWarnings, when set, is given the warnings even when the file is
// invalid, before the problems. Every problem is returned at once (config.Errors: exit code 2).
// The logger writes to stderr, keeping stdout for the command's report.
func loadChecked(ctx context.Context, path string, io IO, showWarnings func([]string)) (*checked, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
	}
	cfg, warnings, err := config.Load(path, config.Options{Environ: io.Environ, Resolver: agent.SecretResolver, Context: ctx})
	if err == nil {
		var bw []string
		bw, err = agent.Check(cfg, modes.ModeAll)
		warnings = append(warnings, bw...)
	}
	if showWarnings != nil {
		showWarnings(warnings)
	}
	if err != nil {
		return nil, usageErr(err)
	}
	log, err := telemetry.NewLoggerFormat(io.Stderr, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return nil, usageErr(fmt.Errorf("log_level: %w", err))
	}
	return &checked{cfg: cfg, warnings: warnings, log: log}, nil
}

// checkMode accepts -m as the incumbent's one-off commands did (any mode, or all); they check
// every mode whatever it says.
func checkMode(mode string) error {
	if _, ok := modes.Lookup(mode); ok || mode == modes.ModeAll {
		return nil
	}
	return fmt.Errorf("unknown mode %q (choose %s or all)", mode, strings.Join(modes.Names(), ", "))
}

// exitCode maps a command's outcome: nil → 0; a usage problem (bad flags, invalid
// configuration — nothing was sent anywhere) → 2; anything else → 1. Problems not yet shown
// are printed to stderr (several configuration problems: one line each).
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
	fmt.Fprintln(io.Stderr, "site-agent:", err)
	return code
}
