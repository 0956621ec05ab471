package usage

import (
	"time"

	"github.com/waldur/site-agent/internal/backends"
)

// Periods returns the n billing months ending with the one containing now (in now's location),
// oldest first.
func Periods(now time.Time, n int) []backends.Period {
	out := make([]backends.Period, n)
	p := backends.PeriodOf(now)
	for i := n - 1; i >= 0; i-- {
		out[i] = p
		p = p.Prev()
	}
	return out
}

// BillingPeriod formats the Waldur billing_period filter value, YYYY-MM-01.
func BillingPeriod(p backends.Period) string {
	return p.Start(time.UTC).Format("2006-01-02")
}

// ReportDate is the timestamp sent with set_usage: the first instant of the period in UTC.
// Waldur books usage into the billing month of this instant in its own zone (UTC) and refuses
// future dates. The incumbent sent the month start in the configured zone with its offset,
// which for a site east of UTC is the last evening of the previous UTC month: the report
// landed in the wrong month, or was refused as backfilling.
func ReportDate(p backends.Period) string {
	return p.Start(time.UTC).Format(time.RFC3339)
}

// Started reports whether Waldur's billing month for p has begun at now (a site east of UTC
// enters a month before Waldur does).
func Started(p backends.Period, now time.Time) bool {
	return !now.Before(p.Start(time.UTC))
}
