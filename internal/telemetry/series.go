package telemetry

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// OfferingLabel is an offering UUID as the offering_uuid label carries it: lower case, no
// dashes, whichever way the configuration wrote it (Waldur's own form).
func OfferingLabel(uuid string) string {
	return strings.ToLower(strings.ReplaceAll(uuid, "-", ""))
}

// DeclareOffering creates an offering's own series at start: its info metric (the name), its
// upstreams' error counters and the degraded flag at zero. Repeating it (a reload) changes
// nothing but a renamed offering's info, whose old name is dropped.
func (m *Metrics) DeclareOffering(uuid, name string, upstreams ...string) {
	id := OfferingLabel(uuid)
	m.OfferingInfo.DeletePartialMatch(prometheus.Labels{"offering_uuid": id})
	m.OfferingInfo.WithLabelValues(id, name).Set(1)
	for _, up := range upstreams {
		m.UpstreamErrors.WithLabelValues(id, up)
	}
	m.BackendDegraded.WithLabelValues(id, "access")
}

// DeclareCycles creates the cycle series of one mode and offering at zero, and says the mode's
// period. first marks the first declaration in this process: the last-cycle time starts at now
// (a reload keeps the one the cycles wrote).
func (m *Metrics) DeclareCycles(mode, uuid string, period time.Duration, first bool) {
	id := OfferingLabel(uuid)
	m.CyclePeriod.WithLabelValues(mode).Set(period.Seconds())
	for _, r := range []string{"ok", "error"} {
		m.Cycles.WithLabelValues(mode, id, r)
	}
	m.CycleDuration.WithLabelValues(mode, id)
	m.LastSuccess.WithLabelValues(mode, id)
	m.CycleRunning.WithLabelValues(mode, id)
	m.CycleStuck.WithLabelValues(mode, id)
	if first {
		m.LastCycle.WithLabelValues(mode, id).SetToCurrentTime()
	}
}

// Forget drops every series of an offering that is no longer configured (after a reload), so
// the number of series stays bounded by the offerings configured.
func (m *Metrics) Forget(uuid string) {
	match := prometheus.Labels{"offering_uuid": OfferingLabel(uuid)}
	for _, v := range []interface{ DeletePartialMatch(prometheus.Labels) int }{
		m.Cycles, m.CycleDuration, m.LastSuccess, m.LastCycle, m.CycleRunning, m.CycleStuck, m.Orders, m.OrdersPending,
		m.WaldurRequests, m.UpstreamErrors, m.UsageReports, m.MemberChanges, m.ResourceErrors, m.BackendDegraded,
		m.OfferingInfo, m.EventConnected, m.EventConnections, m.EventMessages,
	} {
		v.DeletePartialMatch(match)
	}
}
