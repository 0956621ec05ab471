package modes

import (
	"context"
	"errors"
	"time"
)

// seriesDeclarer is a Mode with series of its own to create at start (orders, usage reports, …).
type seriesDeclarer interface {
	declare(u *Unit)
}

// Declare makes the runner's offerings known before any cycle: to the status page (each
// offering and mode), and to the metrics, whose per-offering series it creates at zero so that
// alerts and rate() work from the first scrape — also on a standby replica, which runs no
// cycle. A reload declares again; that keeps the values.
func (r *Runner) Declare() {
	mode := r.Mode.Name()
	for _, u := range r.Units {
		first := r.Env.Status.Declare(mode, r.Period, u.Offering.UUID, u.Offering.Name)
		r.Env.Metrics.DeclareOffering(u.Offering.UUID, u.Offering.Name, "waldur", u.Backend.Name)
		r.Env.Metrics.DeclareCycles(mode, u.Offering.UUID, r.Period, first)
		if d, ok := r.Mode.(seriesDeclarer); ok {
			d.declare(u)
		}
	}
}

// started marks the start of work (also of a new leadership term): the time since the last
// cycle counts from now until the first cycle ends.
func (r *Runner) started() {
	mode, now := r.Mode.Name(), time.Now()
	r.Env.Status.NextCycle(mode, now)
	for _, u := range r.Units {
		r.Env.Metrics.LastCycle.WithLabelValues(mode, u.metricID()).Set(float64(now.UnixNano()) / 1e9)
	}
}

// record counts a finished cycle in the metrics and on the status page.
func (r *Runner) record(u *Unit, start time.Time, err error) {
	mode, id, took := r.Mode.Name(), u.metricID(), time.Since(start)
	result := "ok"
	if err != nil {
		result = "error"
	} else {
		r.Env.Metrics.LastSuccess.WithLabelValues(mode, id).SetToCurrentTime()
	}
	r.Env.Metrics.Cycles.WithLabelValues(mode, id, result).Inc()
	r.Env.Metrics.CycleDuration.WithLabelValues(mode, id).Observe(took.Seconds())
	r.Env.Metrics.LastCycle.WithLabelValues(mode, id).SetToCurrentTime()
	r.Env.Status.CycleFinished(mode, u.Offering.UUID, start, took, err)
	if err != nil && !errors.Is(err, context.Canceled) { // not a stop
		r.Env.Status.Error(u.Offering.UUID, mode, err.Error())
	}
}

// declare creates the report series at zero.
func (m *Report) declare(u *Unit) {
	for _, r := range []string{"sent", "unchanged", "anomaly", "skipped"} {
		m.Env.Metrics.UsageReports.WithLabelValues(u.metricID(), r)
	}
}

// declare creates the membership series at zero.
func (m *Membership) declare(u *Unit) {
	for _, a := range []string{"add", "remove"} {
		m.Env.Metrics.MemberChanges.WithLabelValues(u.metricID(), a)
	}
	for _, k := range []string{"transient", "permanent"} {
		m.Env.Metrics.ResourceErrors.WithLabelValues(u.metricID(), k)
	}
}

// declare creates the series of both sides, and the listeners' at zero (offering_resources_sync
// joins once Waldur's version is known).
func (m *EventMode) declare(u *Unit) {
	eo := m.offerings[u]
	if eo == nil {
		return
	}
	var types []string
	if eo.orders != nil {
		m.Orders.declare(eo.orders)
		m.Env.Metrics.EventPassesCoalesced.WithLabelValues(u.metricID(), passOrders)
		types = append(types, orderTypes...)
	}
	if eo.members != nil {
		m.Membership.declare(eo.members)
		m.Env.Metrics.DeclareOffering(u.Offering.UUID, u.Offering.Name, "waldur", eo.members.Backend.Name)
		m.Env.Metrics.EventPassesCoalesced.WithLabelValues(u.metricID(), passMembership)
		types = append(types, memberTypes...)
	}
	if m.Options.DryRun {
		return
	}
	for _, typ := range types {
		m.Env.Metrics.EventConnected.WithLabelValues(u.metricID(), typ)
		m.Env.Metrics.EventConnections.WithLabelValues(u.metricID(), typ)
	}
}
