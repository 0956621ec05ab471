package agent

import (
	"github.com/waldur/site-agent/internal/leader"
	"github.com/waldur/site-agent/internal/telemetry"
)

// leaderView describes this replica on the status page (el nil: no leader election).
func leaderView(el *leader.Elector) func() telemetry.Leader {
	if el == nil {
		return func() telemetry.Leader { return telemetry.Leader{Leading: true} }
	}
	return func() telemetry.Leader {
		v := telemetry.Leader{Election: true, Leading: el.Leading(), Identity: el.Identity(), Holder: el.Leader()}
		if at := el.Acquired(); !at.IsZero() {
			v.Acquired = &at
		}
		return v
	}
}

// reloaded counts a configuration reload (err nil: applied) in the metrics and on the status
// page.
func (a *Agent) reloaded(err error) {
	result := "success"
	if err != nil {
		result = "failure"
	}
	a.metrics.ConfigReloads.WithLabelValues(result).Inc()
	a.status.Reloaded(err)
}

// retain forgets, once a reloaded agent runs, the offerings its configuration no longer has:
// their series and their place on the status page.
func (a *Agent) retain() {
	var uuids []string
	for _, off := range a.cfg.Offerings {
		uuids = append(uuids, off.UUID)
	}
	for _, gone := range a.status.Retain(uuids) {
		a.metrics.Forget(gone)
	}
}
