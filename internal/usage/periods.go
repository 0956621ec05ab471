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

// ReportDate is the timestamp sent with set_usage: the first instant of the period in the
// configured zone, with its offset (as the incumbent sends it, for the current month too).
func ReportDate(p backends.Period, loc *time.Location) string {
	return p.Start(loc).Format(time.RFC3339)
}
