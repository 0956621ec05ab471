package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/waldur/site-agent/internal/agent"
	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/modes"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/telemetry"
)

// historyFlags are the flags of the incumbent's waldur_site_load_historical_usage
// (waldur_site_agent/common/historical_usage_loader.py, main): --config/-c, --offering-uuid/-o,
// --user-token/-t, --start-date/-s, --end-date/-e (all required), --skip-user-usage,
// --no-staff-check, --dry-run, --reconcile-stale and --resource-backend-id (repeatable).
type historyFlags struct {
	config, offering, token, start, end    string
	skipUsers, noStaffCheck, dryRun, stale bool
	backendIDs                             []string
}

// maxHistoryDays is the incumbent's limit on the range (parse_date_range: 5 × 365 days).
const maxHistoryDays = 5 * 365

func (a *app) historyCommand(name string) *cobra.Command {
	f := &historyFlags{}
	cmd := &cobra.Command{Use: name + " -c FILE -o OFFERING_UUID -t TOKEN -s YYYY-MM-DD -e YYYY-MM-DD",
		Short: "load the usage of past billing months into Waldur, month by month, with a staff token", Args: noArgs}
	fs := cmd.Flags()
	fs.StringVarP(&f.config, "config", "c", "", "configuration file")
	fs.StringVar(&f.config, "config-file", "", "same as --config")
	fs.StringVarP(&f.offering, "offering-uuid", "o", "", "UUID of the offering to load usage for (one of the configuration's)")
	fs.StringVarP(&f.token, "user-token", "t", "", "Waldur API token of a staff user (Waldur refuses past months to the agent's own token)")
	fs.StringVarP(&f.start, "start-date", "s", "", "first day of the range, YYYY-MM-DD (its whole month is loaded)")
	fs.StringVarP(&f.end, "end-date", "e", "", "last day of the range, YYYY-MM-DD (its whole month is loaded)")
	fs.BoolVar(&f.skipUsers, "skip-user-usage", false, "load resource totals only, no per-user usage")
	fs.BoolVar(&f.noStaffCheck, "no-staff-check", false, "do not require a staff token (a service provider's token; Waldur decides)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "read the backend and Waldur but send nothing")
	fs.BoolVar(&f.stale, "reconcile-stale", false, "not supported by site-agent (refused)")
	fs.StringArrayVar(&f.backendIDs, "resource-backend-id", nil, "only the resource with this backend id (repeatable)")
	_ = fs.MarkHidden("config-file")
	_ = cmd.MarkFlagFilename("config", "yaml", "yml")
	cmd.RunE = a.do(func(cmd *cobra.Command, _ []string) int { return a.loadHistory(cmd.Context(), f) })
	return cmd
}

// loadHistory runs the mode with History (modes.Spec.History) once for the one offering, with the
// user's token, over every month of the range.
func (a *app) loadHistory(ctx context.Context, f *historyFlags) int {
	months, err := f.check()
	if err != nil {
		return exitCode(a.io, usageErr(err))
	}
	c, err := loadChecked(ctx, f.config, a.io, nil)
	if err != nil {
		return exitCode(a.io, err)
	}
	spec, cfg, err := f.scope(c.cfg)
	if err != nil {
		return exitCode(a.io, usageErr(err))
	}
	if !f.noStaffCheck {
		if err := staffCheck(ctx, cfg, c); err != nil {
			return exitCode(a.io, err)
		}
	}
	log, err := telemetry.NewLoggerFormat(a.io.Stdout, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return exitCode(a.io, usageErr(err))
	}
	hist := &modes.History{Months: months, BackendIDs: f.backendIDs, SkipUserUsage: f.skipUsers}
	ag, err := agent.Build(cfg, agent.Options{Mode: spec.Name, DryRun: f.dryRun, History: hist, Logger: log,
		Metrics: telemetry.NewMetrics(), Version: Version, Periods: map[string]time.Duration{spec.Name: time.Hour}})
	if err != nil {
		return exitCode(a.io, usageErr(err))
	}
	defer ag.Close()
	if err := ag.RunOnce(ctx); err != nil {
		return exitCode(a.io, err)
	}
	fmt.Fprintf(a.io.Stdout, "%s: %d month(s) from %s to %s loaded%s\n", cfg.Offerings[0].Label(), len(months), months[0], months[len(months)-1], dryNote(f.dryRun))
	return ExitOK
}

func dryNote(dry bool) string {
	if dry {
		return " (dry run: nothing sent)"
	}
	return ""
}

// check validates the flags and returns the months of the range.
func (f *historyFlags) check() ([]backends.Period, error) {
	for _, r := range []struct{ flag, v string }{{"--config", f.config}, {"--offering-uuid", f.offering}, {"--user-token", f.token},
		{"--start-date", f.start}, {"--end-date", f.end}} {
		if strings.TrimSpace(r.v) == "" {
			return nil, fmt.Errorf("%s is required", r.flag)
		}
	}
	if f.stale {
		return nil, errors.New("--reconcile-stale is not supported: site-agent corrects a month's totals when its backend reports them again, and leaves records the backend no longer reports as they are")
	}
	start, err1 := time.Parse(time.DateOnly, f.start)
	end, err2 := time.Parse(time.DateOnly, f.end)
	switch {
	case err1 != nil:
		return nil, fmt.Errorf("--start-date: want YYYY-MM-DD, got %q", f.start)
	case err2 != nil:
		return nil, fmt.Errorf("--end-date: want YYYY-MM-DD, got %q", f.end)
	case end.Before(start):
		return nil, fmt.Errorf("--end-date %s is before --start-date %s", f.end, f.start)
	case end.Sub(start) > maxHistoryDays*24*time.Hour:
		return nil, fmt.Errorf("the range is %d days; at most %d (5 years) are loaded at once", int(end.Sub(start).Hours()/24), maxHistoryDays)
	}
	var months []backends.Period
	for p, last := backends.PeriodOf(start), backends.PeriodOf(end); ; p = p.Next() {
		months = append(months, p)
		if p == last {
			return months, nil
		}
	}
}

// scope is the configuration the pass runs: only the offering asked for, authenticated with the
// user's token, and the mode with History that it must run.
func (f *historyFlags) scope(cfg *config.Config) (modes.Spec, *config.Config, error) {
	var spec modes.Spec
	for _, s := range modes.Specs() {
		if s.History {
			spec = s
		}
	}
	for _, off := range cfg.Offerings {
		if !hexEq(off.UUID, f.offering) {
			continue
		}
		if why := spec.Skip(off); why != "" {
			key, _ := spec.BackendKey(off)
			return spec, nil, fmt.Errorf("%s: %s is not set, so there is no usage to load", off.Label(), key)
		}
		off.Token, off.OIDC = secret.New(f.token), nil
		one := *cfg
		one.Offerings = []config.Offering{off}
		return spec, &one, nil
	}
	return spec, nil, fmt.Errorf("offering %s is not in %s", f.offering, cfg.Path)
}

// staffCheck requires the token to belong to a staff user (the incumbent's validate_staff_user).
func staffCheck(ctx context.Context, cfg *config.Config, c *checked) error {
	wc, err := agent.ProbeClient(cfg, cfg.Offerings[0], userAgent("historical-usage"), c.log)
	if err != nil {
		return usageErr(err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	me, err := wc.Me(ctx)
	if err != nil {
		return fmt.Errorf("checking the user token: %w", err)
	}
	if !me.IsStaff {
		return fmt.Errorf("user %s is not staff: loading past usage needs a staff user's token (or --no-staff-check with a service provider's token)", me.Username)
	}
	return nil
}
