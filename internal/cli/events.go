package cli

import (
	"fmt"
	"net/http"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/modes"
	"github.com/waldur/site-agent/internal/stomp"
	"github.com/waldur/site-agent/internal/upstream"
)

// eventSpec is event_process: for every offering with stomp_enabled, its order side (when
// order_processing_backend is set) and its membership side (when membership_sync_backend is set
// and stomp_membership_sync_enabled is not false), one listener per object type, and a
// reconciliation pass every WALDUR_SITE_AGENT_RECONCILIATION_PERIOD_MINUTES.
func eventSpec() modeSpec {
	return modeSpec{name: "event_process", period: 60 * time.Minute, backend: eventBackend,
		role: func(backends.Set) error { return nil }, build: buildEvents}
}

// eventBackend names the backend of an offering's event unit: the order backend, else the
// event-driven membership backend; with neither, "stomp_enabled" is the key to set.
func eventBackend(off config.Offering) (string, string) {
	switch {
	case off.OrderBackend != "":
		return "order_processing_backend", off.OrderBackend
	case off.MembershipBackend != "" && !off.MembershipPolling():
		return "membership_sync_backend", off.MembershipBackend
	}
	return "stomp_enabled", ""
}

// eventTask is the event mode's runner, which also answers readiness: not ready while any
// listener is disconnected.
type eventTask struct {
	*modes.Runner
	events *modes.EventMode
}

// Ready implements the agent's readiness hook.
func (t eventTask) Ready() error { return t.events.Ready() }

// buildEvents turns the units assemble paired with their primary backend into event offerings
// with both sides, checking that each side's backend can play its role.
func buildEvents(a *agent, cfg *config.Config, o buildOptions, sh *shared, p taskParams) (task, error) {
	var offs []modes.EventOffering
	for _, u := range p.units {
		off := u.Offering
		eo := modes.EventOffering{Offering: off, Waldur: u.Waldur, Log: u.Log}
		if off.OrderBackend != "" {
			if err := canProvision(u.Backend); err != nil {
				return nil, sideError(cfg, off, "order_processing_backend", err)
			}
			eo.Orders = u.Backend
		}
		if off.MembershipBackend != "" && !off.MembershipPolling() {
			set, err := a.sharedBackend(off, o, "membership_sync_backend", off.MembershipBackend, sh)
			if err != nil {
				return nil, err
			}
			if err := canSync(set); err != nil {
				return nil, sideError(cfg, off, "membership_sync_backend", err)
			}
			eo.Membership = set
		}
		offs = append(offs, eo)
	}
	opts := modes.EventModeOptions{DryRun: o.dryRun, HTTPClient: func(off config.Offering) *http.Client {
		return stomp.NewHTTPClient(upstream.TransportOptions{VerifyTLS: off.VerifySSL, Proxy: cfg.GlobalProxy})
	}}
	ev, units := modes.NewEventMode(p.env, p.registrar, offs, opts)
	r := &modes.Runner{Env: p.env, Mode: ev, Units: units, Period: p.period, Timeout: p.timeout, Tick: p.tick,
		Register: p.register, OnCycle: p.onCycle}
	return eventTask{Runner: r, events: ev}, nil
}

// servedByEvents explains an empty polling mode whose offerings all use events.
func servedByEvents(cfg *config.Config, mode string) error {
	if mode != "order_process" && mode != "membership_sync" {
		return nil
	}
	for _, off := range cfg.Offerings {
		if why := skipReason(mode, off); why == "offering is served by event_process; skipped" ||
			why == "offering syncs membership through events; skipped" {
			return &config.Error{Path: cfg.Path, Key: "stomp_enabled",
				Problem: fmt.Sprintf("the offerings of mode %s are served by events: run -m event_process (or -m all)", mode)}
		}
	}
	return nil
}

func sideError(cfg *config.Config, off config.Offering, key string, err error) error {
	return &config.Error{Path: cfg.Path, Offering: off.Label(), Key: fmt.Sprintf("offerings[%d].%s", off.Index, key), Problem: err.Error()}
}
