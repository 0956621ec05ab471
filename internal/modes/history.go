package modes

import (
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/usage"
	wc "github.com/waldur/site-agent/internal/waldurclient"
)

// History is a one-off load of past usage (the incumbent's waldur_site_load_historical_usage):
// the mode whose Spec has History reports the billing months given instead of the latest
// reporting_periods, optionally only some resources and without per-user usage. Every month's
// failure is the pass's (a regular pass only warns about past months), and Waldur refusing to
// backfill a month is a failure too: the person who asked for the month must hear of it.
type History struct {
	Months        []backends.Period
	BackendIDs    []string // only the resources with these backend ids; none: every resource
	SkipUserUsage bool     // resource totals only
}

// reportPeriods are the billing periods a pass reports: History's months, else the latest
// reporting_periods ending with now's.
func (e *Env) reportPeriods(now time.Time) []backends.Period {
	if e.History != nil {
		return e.History.Months
	}
	return usage.Periods(now, e.ReportingPeriods)
}

// only keeps the resources History names (all of them without History or names).
func (h *History) only(resources []wc.Resource) []wc.Resource {
	if h == nil || len(h.BackendIDs) == 0 {
		return resources
	}
	want := map[string]bool{}
	for _, id := range h.BackendIDs {
		want[id] = true
	}
	var out []wc.Resource
	for _, r := range resources {
		if want[r.BackendID] {
			out = append(out, r)
		}
	}
	return out
}

// userUsage reports whether per-user usage is reported.
func (h *History) userUsage() bool { return h == nil || !h.SkipUserUsage }
