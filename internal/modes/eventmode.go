package modes

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/stomp"
	"github.com/waldur/site-agent/internal/waldurclient"
)

// EventOffering is one offering served by event_process: its Waldur client and the backends of
// its order and membership sides (a zero Set, without Name, turns that side off).
type EventOffering struct {
	Offering   config.Offering
	Waldur     *waldurclient.Client
	Orders     backends.Set
	Membership backends.Set
	Log        *zap.Logger
}

// EventModeOptions tune the event mode.
type EventModeOptions struct {
	// HTTPClient returns the client for an offering's broker handshake (TLS verification and
	// proxy); default: stomp.NewHTTPClient with the offering's verify_ssl.
	HTTPClient func(config.Offering) *http.Client
	// HeartBeat and Backoff are passed to every listener (zero: the stomp package defaults).
	HeartBeat time.Duration
	Backoff   stomp.Backoff
	// HealthEvery is how often Waldur is checked while events flow (default 30 min).
	HealthEvery time.Duration
	// DryRun subscribes to nothing (subscribing writes to Waldur); passes still read.
	DryRun bool
}

// EventMode is the event_process mode. Per offering it keeps one listener per object type (order;
// user_role, resource, service_account, course_account, offering_user and, from Waldur 8.0.9,
// offering_resources_sync) and turns every event into the same work the polling modes do:
// one order processed, the affected resources' membership synced. RunOnce is the periodic
// reconciliation — an order pass and a membership pass — so that events lost while the broker
// was unreachable are still handled; a listener that reconnects triggers its side's pass at
// once. The Runner starts Listen once per offering.
type EventMode struct {
	Env        *Env
	Registrar  *Registrar
	Orders     *Orders
	Membership *Membership
	Options    EventModeOptions

	offerings map[*Unit]*eventOffering // by the runner's unit
}

// NewEventMode builds the mode and the units the Runner runs it over (one per offering). It makes
// no network call.
func NewEventMode(env *Env, reg *Registrar, offs []EventOffering, opts EventModeOptions) (*EventMode, []*Unit) {
	if opts.HealthEvery <= 0 {
		opts.HealthEvery = 30 * time.Minute
	}
	m := &EventMode{Env: env, Registrar: reg, Orders: &Orders{Env: env}, Membership: &Membership{Env: env},
		Options: opts, offerings: map[*Unit]*eventOffering{}}
	var units []*Unit
	for _, o := range offs {
		eo := &eventOffering{inflight: map[string]bool{}, finished: map[string]time.Time{}}
		side := func(set backends.Set) *Unit {
			if set.Name == "" {
				return nil
			}
			return &Unit{Offering: o.Offering, Waldur: o.Waldur, Backend: set, Log: o.Log.With(zap.String("backend", set.Name))}
		}
		eo.orders, eo.members = side(o.Orders), side(o.Membership)
		eo.primary = eo.orders
		if eo.primary == nil {
			eo.primary = eo.members
		}
		if eo.primary == nil {
			continue
		}
		m.offerings[eo.primary] = eo
		units = append(units, eo.primary)
	}
	return m, units
}

// Name implements Mode.
func (*EventMode) Name() string { return ModeEventProcess }

// eventOffering is the event mode's state for one offering.
type eventOffering struct {
	orders, members *Unit // nil when that side is off
	primary         *Unit

	ordersPass, membersPass pass
	bg                      sync.WaitGroup // triggered passes

	mu        sync.Mutex
	started   bool
	listeners map[string]*stomp.Listener // by object type
	inflight  map[string]bool            // orders being handled by an event
	finished  map[string]time.Time       // orders this process brought to a final state
}

// RunOnce is the reconciliation: every open order, then every resource's membership.
func (m *EventMode) RunOnce(ctx context.Context, u *Unit) error {
	eo := m.offerings[u]
	if eo == nil {
		return fmt.Errorf("offering %s is not served by event_process", u.Offering.Name)
	}
	var errs []error
	if eo.orders != nil {
		errs = append(errs, eo.ordersPass.run(ctx, func(ctx context.Context) error { return m.Orders.RunOnce(ctx, eo.orders) }))
	}
	if eo.members != nil {
		errs = append(errs, eo.membersPass.run(ctx, func(ctx context.Context) error { return m.Membership.RunOnce(ctx, eo.members) }))
	}
	return errors.Join(errs...)
}

// Ready reports an error while any listener is not subscribed (for /readyz).
func (m *EventMode) Ready() error {
	if m.Options.DryRun {
		return nil
	}
	var errs []error
	for _, eo := range m.offerings {
		eo.mu.Lock()
		name := eo.primary.Offering.Name
		if !eo.started {
			errs = append(errs, fmt.Errorf("offering %q: event listeners are not running yet", name))
		}
		for typ, l := range eo.listeners {
			if st := l.Status(); !st.Connected {
				errs = append(errs, fmt.Errorf("offering %q: %s events not connected (since %s, %d failed attempts, last error: %s)",
					name, typ, st.Since.UTC().Format(time.RFC3339), st.Failures, st.LastError))
			}
		}
		eo.mu.Unlock()
	}
	return errors.Join(errs...)
}
