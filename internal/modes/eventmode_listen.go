package modes

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/stomp"
	"github.com/waldur/site-agent/internal/upstream"
)

// Listener is a Mode that also keeps something running per offering between cycles; the
// Runner starts Listen once per offering when Run starts and waits for it when Run stops. ctx
// is the run's work context: Stopping(ctx) turns true at the stop signal, and ctx itself ends
// after the grace period.
type Listener interface {
	Listen(ctx context.Context, u *Unit) error
}

// Readiness is a Mode with its own readiness condition (for /readyz).
type Readiness interface {
	Ready() error
}

// Object types the product subscribes to, per side. Others of §6 need roles no backend here
// plays (API keys, resource import, periodic limits).
var (
	orderTypes  = []string{"order"}
	memberTypes = []string{"user_role", "resource", "service_account", "course_account", "offering_user"}
)

// syncType is offering_resources_sync, which Waldur knows from 8.0.9 (8.0.5's enum lacks it;
// registering it there is refused).
const syncType = "offering_resources_sync"

// Listen registers the offering's event subscriptions and keeps one listener per object type
// until the run stops.
func (m *EventMode) Listen(ctx context.Context, u *Unit) error {
	eo := m.offerings[u]
	if eo == nil {
		return fmt.Errorf("offering %s is not served by event_process", u.Offering.Name)
	}
	if m.Options.DryRun {
		u.Log.Info("dry run: not subscribing to events (registering a subscription writes to Waldur); passes still run")
		return nil
	}
	stop := stopOf(ctx)
	identity, ok := m.identity(stop, u)
	if !ok {
		return nil
	}
	types := m.objectTypes(stop, eo)
	listeners := map[string]*stomp.Listener{}
	for _, typ := range types {
		l, err := m.newListener(ctx, eo, identity, typ)
		if err != nil {
			return err
		}
		listeners[typ] = l
	}
	eo.mu.Lock()
	eo.listeners, eo.started = listeners, true
	eo.mu.Unlock()
	u.Log.Info("listening for events", zap.Strings("object_types", types), zap.String("broker", u.Offering.EventBroker.URL()))
	var wg sync.WaitGroup
	for _, l := range listeners {
		wg.Add(1)
		go func() { defer wg.Done(); _ = l.Run(stop, ctx) }()
	}
	m.healthChecks(stop, u)
	wg.Wait()
	eo.bg.Wait()
	return nil
}

// identity registers the agent identity, retrying with backoff until it works or the run stops.
func (m *EventMode) identity(stop context.Context, u *Unit) (string, bool) {
	for attempt := 0; ; attempt++ {
		id, err := m.Registrar.Identity(stop, u)
		if err == nil && id != "" {
			return id, true
		}
		if stop.Err() != nil {
			return "", false
		}
		if err == nil {
			err = fmt.Errorf("waldur returned no identity")
		}
		wait := upstream.Backoff(2*time.Second, time.Minute, attempt, nil)
		u.Log.Warn("could not register the agent identity; events wait for it", zap.Error(err), zap.Duration("retry_in", wait))
		select {
		case <-stop.Done():
			return "", false
		case <-time.After(wait):
		}
	}
}

// objectTypes are the types this offering subscribes to.
func (m *EventMode) objectTypes(ctx context.Context, eo *eventOffering) []string {
	var types []string
	if eo.orders != nil {
		types = append(types, orderTypes...)
	}
	if eo.members != nil {
		types = append(types, memberTypes...)
		v, err := eo.members.Waldur.Version(ctx)
		switch {
		case err != nil:
			eo.members.Log.Warn("could not read waldur's version; not subscribing to offering_resources_sync (reconciliation covers it)",
				zap.Error(err))
		case atLeast(v, 8, 0, 9):
			types = append(types, syncType)
		default:
			eo.members.Log.Info("waldur predates offering_resources_sync events (8.0.9); forced syncs are picked up by reconciliation",
				zap.String("waldur_version", v))
		}
	}
	return types
}

func (m *EventMode) newListener(work context.Context, eo *eventOffering, identity, typ string) (*stomp.Listener, error) {
	u := eo.members
	if typ == "order" {
		u = eo.orders
	}
	off := u.Offering
	hc := stomp.NewHTTPClient(upstream.TransportOptions{VerifyTLS: off.VerifySSL})
	if m.Options.HTTPClient != nil {
		hc = m.Options.HTTPClient(off)
	}
	metrics, status, id := m.Env.Metrics, m.Env.Status, u.metricID()
	metrics.EventConnected.WithLabelValues(id, typ)
	metrics.EventConnections.WithLabelValues(id, typ)
	status.Listener(off.UUID, typ, false)
	return stomp.NewListener(stomp.Options{
		URL: off.EventBroker.URL(), HTTPClient: hc, HeartBeat: m.Options.HeartBeat, Backoff: m.Options.Backoff,
		Workers: m.Env.Concurrency, Name: typ, Logger: u.Log,
		Prepare: func(ctx context.Context) (stomp.Session, error) { return m.prepare(ctx, u, identity, typ) },
		Handle:  m.handler(eo, u, typ),
		OnState: func(connected bool) {
			v := 0.0
			if connected {
				v = 1
				metrics.EventConnections.WithLabelValues(id, typ).Inc()
				m.reconcileSide(work, eo, typ) // events may have been missed while not subscribed
			}
			metrics.EventConnected.WithLabelValues(id, typ).Set(v)
			status.Listener(off.UUID, typ, connected)
		},
	})
}

// prepare registers the subscription for typ and its queue (both idempotent in Waldur), and
// returns how to log in: the subscription is the broker user, the static token its password,
// the Waldur user's UUID the virtual host.
func (m *EventMode) prepare(ctx context.Context, u *Unit, identity, typ string) (stomp.Session, error) {
	desc := "Event subscription created by site-agent for identity agent-" + u.Offering.UUID
	sub, err := u.Waldur.RegisterEventSubscription(ctx, identity, typ, desc)
	if err != nil {
		if failure.HasStatus(err, 404) {
			m.Registrar.Forget(u.Offering.UUID) // the identity is gone: register it again next time
		}
		return stomp.Session{}, fmt.Errorf("register %s event subscription: %w", typ, err)
	}
	q, err := u.Waldur.CreateEventQueue(ctx, sub.UUID, u.Offering.UUID, typ)
	if err != nil {
		return stomp.Session{}, fmt.Errorf("create %s event queue: %w", typ, err)
	}
	s := stomp.Session{VHost: hex(q.VHost), Login: hex(sub.UUID), Passcode: u.Offering.Token, Queue: q.QueueName}
	if s.VHost == "" {
		s.VHost = hex(sub.UserUUID)
	}
	if s.Queue == "" {
		s.Queue = "subscription_" + hex(sub.UUID) + "_offering_" + hex(u.Offering.UUID) + "_" + typ
	}
	return s, nil
}

// reconcileSide asks for the pass covering typ's events (in the background, coalesced).
func (m *EventMode) reconcileSide(ctx context.Context, eo *eventOffering, typ string) {
	side := passMembership
	if typ == "order" {
		side = passOrders
	}
	m.fullPass(ctx, eo, side)
}

// healthChecks checks Waldur every HealthEvery until stop, as the incumbent's event loop did.
func (m *EventMode) healthChecks(stop context.Context, u *Unit) {
	t := time.NewTicker(m.Options.HealthEvery)
	defer t.Stop()
	for {
		select {
		case <-stop.Done():
			return
		case <-t.C:
			if err := u.Waldur.Ping(stop); err != nil && stop.Err() == nil {
				u.Log.Warn("waldur health check failed", zap.Error(err))
			}
		}
	}
}

// stopOf returns the context that ends at the stop signal (the work context outlives it).
func stopOf(ctx context.Context) context.Context {
	if s, ok := ctx.(*stopAware); ok {
		return s.stop
	}
	return ctx
}

// atLeast compares a Waldur version ("8.0.9", "8.1.0rc19.dev…") with major.minor.patch;
// versions it cannot read count as older.
func atLeast(v string, want ...int) bool {
	parts := strings.SplitN(strings.TrimPrefix(strings.TrimSpace(v), "v"), ".", len(want))
	if len(parts) < len(want) {
		return false
	}
	for i, w := range want {
		j := 0
		for j < len(parts[i]) && parts[i][j] >= '0' && parts[i][j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(parts[i][:j])
		if err != nil {
			return false
		}
		if n != w {
			return n > w
		}
	}
	return true
}
