package modes

import (
	"fmt"
	"net/http"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/stomp"
	"github.com/waldur/site-agent/internal/upstream"
)

// eventModeSpec is event_process: for every offering with stomp_enabled, its order side (when
// order_processing_backend is set) and its membership side (when membership_sync_backend is set
// and stomp_membership_sync_enabled is not false), one listener per object type, and a
// reconciliation pass every WALDUR_SITE_AGENT_RECONCILIATION_PERIOD_MINUTES.
func eventModeSpec() Spec {
	return Spec{Name: ModeEventProcess, Period: 60 * time.Minute, PeriodEnv: "WALDUR_SITE_AGENT_RECONCILIATION_PERIOD_MINUTES",
		Processor: "OfferingEventProcessor", BackendKey: eventBackend, Requires: func(backends.Set) error { return nil },
		Skip: skipEvents, New: newEventRunner}
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

// skipEvents: event_process runs where stomp_enabled is true and the offering has an order or
// event-driven membership backend.
func skipEvents(off config.Offering) string {
	switch _, name := eventBackend(off); {
	case !off.StompEnabled:
		return skipNoEvents
	case name == "":
		return skipNoBackend
	}
	return ""
}

// newEventRunner turns the units assembled with their primary backend into event offerings
// with both sides, checking that each side's backend can play its role.
func newEventRunner(p TaskParams) (*Runner, error) {
	cfg := p.Config
	var offs []EventOffering
	for _, u := range p.Units {
		off := u.Offering
		eo := EventOffering{Offering: off, Waldur: u.Waldur, Log: u.Log}
		if off.OrderBackend != "" {
			if err := canProvision(u.Backend); err != nil {
				return nil, sideError(cfg, off, "order_processing_backend", err)
			}
			eo.Orders = u.Backend
		}
		if off.MembershipBackend != "" && !off.MembershipPolling() {
			set, err := p.Backend(off, "membership_sync_backend", off.MembershipBackend)
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
	opts := EventModeOptions{DryRun: p.DryRun, HTTPClient: func(off config.Offering) *http.Client {
		return stomp.NewHTTPClient(upstream.TransportOptions{VerifyTLS: off.VerifySSL, Proxy: cfg.GlobalProxy})
	}}
	ev, units := NewEventMode(p.Env, p.Registrar, offs, opts)
	return &Runner{Env: p.Env, Mode: ev, Units: units, Period: p.Period, Timeout: p.Timeout, Tick: p.Tick,
		Register: p.Register, OnCycle: p.OnCycle}, nil
}

func sideError(cfg *config.Config, off config.Offering, key string, err error) error {
	return &config.Error{Path: cfg.Path, Offering: off.Label(), Key: fmt.Sprintf("offerings[%d].%s", off.Index, key), Problem: err.Error()}
}
