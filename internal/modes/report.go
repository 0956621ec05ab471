package modes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/usage"
	wc "github.com/waldur/site-agent/internal/waldurclient"
)

// Report is the report mode: backend usage → Waldur component usages for the current billing
// month and the reporting_periods-1 months before it, per resource and per user.
type Report struct {
	Env *Env
	// AllowDecrease turns off the anomaly guard against decreasing totals (backends whose usage
	// can legitimately go down, such as current-allocation gauges).
	AllowDecrease bool
}

// Name implements Mode.
func (*Report) Name() string { return ModeReport }

// RunOnce reports usage of every OK or Erred resource with a backend id.
func (m *Report) RunOnce(ctx context.Context, u *Unit) error {
	rep := u.Backend.Usage
	if rep == nil {
		return fmt.Errorf("backend %q cannot report usage", u.Backend.Name)
	}
	if _, err := backendReady(ctx, m.Env, u, "no usage reported"); err != nil {
		return err
	}
	all, err := u.Waldur.ListResources(ctx, u.Offering.UUID, wc.ResourceOK, wc.ResourceErred)
	if err != nil {
		return fmt.Errorf("list resources: %w", err)
	}
	var resources []wc.Resource
	for _, r := range all {
		if r.Malformed != "" {
			u.Log.Error("resource could not be read; not reported", zap.String("resource", r.UUID), zap.String("error", r.Malformed))
			continue
		}
		if r.BackendID != "" {
			resources = append(resources, r)
		}
	}
	if resources = m.Env.History.only(resources); len(resources) == 0 {
		return nil
	}
	off, err := u.Waldur.GetOffering(ctx, u.Offering.UUID, "components")
	if err != nil {
		return fmt.Errorf("fetch offering components: %w", err)
	}
	known := map[string]bool{}
	for _, c := range off.Components {
		known[c.Type] = true
	}
	now := m.Env.now().In(m.Env.Location)
	var errs []error
	for _, p := range m.Env.reportPeriods(now) {
		current := p == backends.PeriodOf(now)
		if err := m.reportPeriod(ctx, u, rep, resources, known, p, current); err != nil {
			if current || m.Env.History != nil {
				errs = append(errs, err)
			} else {
				u.Log.Warn("past period not reported", zap.Stringer("period", p), zap.Error(err))
			}
		}
	}
	return errors.Join(errs...)
}

// periodRun is one period's report across the offering's resources.
type periodRun struct {
	m        *Report
	u        *Unit
	period   backends.Period
	current  bool
	date     string
	existing map[string][]wc.ComponentUsage // resource uuid (hex) → records
	known    map[string]bool

	userOnce  sync.Once
	userUsage map[string]float64 // component usage uuid + "/" + username → amount
	userErr   error
}

func (m *Report) reportPeriod(ctx context.Context, u *Unit, rep backends.UsageReporter, resources []wc.Resource,
	known map[string]bool, p backends.Period, current bool) error {
	domain := make([]backends.Resource, len(resources))
	for i, r := range resources {
		domain[i] = toBackend(r, u.Components())
	}
	if !usage.Started(p, m.Env.now()) {
		u.Log.Info("waldur's billing month has not begun yet (it runs on UTC); reporting later", zap.Stringer("period", p))
		return nil
	}
	before := backends.PeriodOf(m.Env.now().In(m.Env.Location))
	measured, err := rep.Usage(ctx, domain, p, current)
	if err != nil {
		return fmt.Errorf("backend usage for %s: %w", p, err)
	}
	if after := backends.PeriodOf(m.Env.now().In(m.Env.Location)); current && after != before {
		u.Log.Info("billing month changed while measuring; skipping until next cycle", zap.Stringer("period", p))
		return nil
	}
	if len(measured) == 0 {
		return nil
	}
	bp := usage.BillingPeriod(p)
	records, err := u.Waldur.ListOfferingUsages(ctx, u.Offering.UUID, bp)
	if err != nil {
		return fmt.Errorf("list usages for %s: %w", bp, err)
	}
	run := &periodRun{m: m, u: u, period: p, current: current, date: usage.ReportDate(p),
		existing: map[string][]wc.ComponentUsage{}, known: known}
	for _, rec := range records {
		key := hex(rec.ResourceUUID)
		run.existing[key] = append(run.existing[key], rec)
	}
	var mu sync.Mutex
	var failures []string
	forEach(ctx, m.Env.Concurrency, resources, func(r wc.Resource) {
		got, ok := measured[r.BackendID]
		if !ok {
			return
		}
		if err := run.resource(ctx, r, got); err != nil {
			mu.Lock()
			failures = append(failures, r.UUID+": "+err.Error())
			mu.Unlock()
		}
	})
	if len(failures) > 0 {
		return fmt.Errorf("%d resource(s) not reported for %s: %s", len(failures), p, strings.Join(failures, "; "))
	}
	return nil
}

func (run *periodRun) resource(ctx context.Context, r wc.Resource, got backends.Usage) error {
	m, u := run.m, run.u
	log := u.Log.With(zap.String("resource", r.UUID), zap.Stringer("period", run.period))
	total := usage.UsageToWaldur(got.Total, u.Components())
	existing := run.existing[hex(r.UUID)]
	items, verdict, dropped, reason := planUsage(total, existing, run.known, m.AllowDecrease || u.Backend.UsageIsGauge)
	if len(dropped) > 0 {
		log.Warn("usage of components the offering does not have was not reported", zap.Strings("components", dropped))
	}
	switch verdict {
	case usageAnomaly:
		m.Env.Metrics.UsageReports.WithLabelValues(u.metricID(), "anomaly").Inc()
		log.Warn("usage anomaly; nothing reported", zap.String("reason", reason))
		return nil
	case usageUnchanged:
		m.Env.Metrics.UsageReports.WithLabelValues(u.metricID(), "unchanged").Inc()
	case usageSend:
		if err := u.Waldur.SetUsage(ctx, r.UUID, run.date, items); err != nil {
			if !run.current && m.Env.History == nil && failure.HasStatus(err, 400) && strings.Contains(err.Error(), "backfilling past billing periods") {
				log.Info("waldur refuses backfilling this period with the agent's token; skipped")
				m.Env.Metrics.UsageReports.WithLabelValues(u.metricID(), "skipped").Inc()
				return nil
			}
			return fmt.Errorf("set usage: %w", err)
		}
		m.Env.Metrics.UsageReports.WithLabelValues(u.metricID(), "sent").Inc()
		log.Info("usage reported", zap.Any("usage", total))
		existing = nil // the records changed; per-user shares need their fresh ids
	}
	if len(got.Users) == 0 || !m.Env.History.userUsage() {
		return nil
	}
	return run.users(ctx, r, got.Users, existing)
}
