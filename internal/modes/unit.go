package modes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/telemetry"
	"github.com/waldur/site-agent/internal/waldurclient"
)

// Env is what every mode shares in one process.
type Env struct {
	Mode             string
	Version          string
	Location         *time.Location
	ReportingPeriods int
	ExposeDetails    bool
	Concurrency      int
	Metrics          *telemetry.Metrics
	// Status is what /status shows (nil: nothing recorded).
	Status    *telemetry.Status
	Heartbeat *telemetry.Heartbeat
	Now       func() time.Time
	Log       *zap.Logger
	// History, set for a one-off load of past usage, replaces the months the mode whose Spec has
	// History reports (the other modes ignore it).
	History *History
}

func (e *Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// touch records liveness at the start of a unit's cycle (the only record in --once runs; a
// running loop also has the runner's heartbeat ticker, which beats whatever the cycles do).
func (e *Env) touch() {
	if e.Heartbeat != nil {
		e.Heartbeat.Touch()
	}
}

// Unit is one offering as one mode works on it.
type Unit struct {
	Offering config.Offering
	Waldur   *waldurclient.Client
	Backend  backends.Set
	Log      *zap.Logger

	registered bool
	locks      keyLocks  // per resource: orders, membership
	ping       pingCache // event-driven work pings the backend at most every pingEvery
	release    releaseGate
	sent       sentStatuses  // membership sync reports last sent, per resource
	pending    pendingOrders // open orders, for the gauge and /status
}

// Components are the offering's configured components.
func (u *Unit) Components() backends.Components { return u.Offering.Components }

// metricID is the offering as its metrics' offering_uuid label names it.
func (u *Unit) metricID() string { return telemetry.OfferingLabel(u.Offering.UUID) }

// Mode is one kind of work the runner repeats.
type Mode interface {
	// Name is the mode as given with -m (order_process, membership_sync, report).
	Name() string
	// RunOnce does one cycle for one offering.
	RunOnce(ctx context.Context, u *Unit) error
}

// publicError turns a failure into the text stored on a Waldur order or resource. With
// expose_backend_error_details off, only messages written for users (failure.Error) pass.
func (e *Env) publicError(err error) string {
	if e.ExposeDetails {
		return secret.Scrub(err.Error())
	}
	if msg, ok := failure.PublicMessage(err); ok {
		return secret.Scrub(msg)
	}
	return "Internal backend error. Please contact the service provider."
}

// backendReady pings the backend before a cycle. When the backend cannot be reached (down,
// wrong credentials, an untrusted certificate), nothing is touched this cycle: no order erred,
// no resource marked erred because of the agent's own connectivity. When only its access
// service is down (the error wraps backends.ErrAccessNotReady), the cycle goes on with access
// false: the caller skips membership changes; the rest of the work is not held back. The
// site_agent_backend_degraded gauge and a warning say so.
func backendReady(ctx context.Context, env *Env, u *Unit, consequence string) (access bool, err error) {
	p := u.Backend.Pinger
	if p == nil {
		return true, nil
	}
	err = p.Ping(ctx)
	degraded := errors.Is(err, backends.ErrAccessNotReady)
	if env.Metrics != nil {
		env.Metrics.BackendDegraded.WithLabelValues(u.metricID(), "access").Set(map[bool]float64{false: 0, true: 1}[degraded])
	}
	env.Status.Upstream(u.Offering.UUID, u.Backend.Name, err != nil && !degraded, errText(err))
	if degraded {
		env.Status.Upstream(u.Offering.UUID, "access", true, err.Error())
	} else {
		env.Status.Recovered(u.Offering.UUID, "access")
	}
	switch {
	case err == nil:
		return true, nil
	case degraded:
		u.Log.Warn("backend access management not ready; access changes wait, other work goes on", zap.Error(err))
		return false, nil
	}
	u.Log.Warn("backend not ready; "+consequence+" this cycle", zap.Error(err))
	return false, fmt.Errorf("backend ping: %w", err)
}

// errText is err's message, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
