package modes

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"go.uber.org/zap"
)

// Sides of an offering a full pass covers (the pass label of event_passes_coalesced_total).
const (
	passOrders     = "order"
	passMembership = "membership"
)

// pass serialises one side's full passes for an offering, and coalesces the passes asked for
// in the background: at most one runs and at most one waits to start. An ask that finds one
// waiting is covered by it — the waiting pass has not read anything yet — so a burst of asks
// costs at most two passes and none is lost.
type pass struct {
	exec    sync.Mutex // held while a pass runs
	mu      sync.Mutex
	pending bool // a triggered pass waits for exec and has not started
}

// run runs fn now, after the pass in progress (the runner's reconciliation).
func (p *pass) run(ctx context.Context, fn func(context.Context) error) error {
	p.exec.Lock()
	defer p.exec.Unlock()
	return fn(ctx)
}

// trigger runs fn in the background once the pass in progress is over, unless a pass is already
// waiting to start; then it returns false (coalesced). A pass that would start after the run was
// asked to stop is skipped.
func (p *pass) trigger(ctx context.Context, wg *sync.WaitGroup, fn func(context.Context)) bool {
	p.mu.Lock()
	if p.pending {
		p.mu.Unlock()
		return false
	}
	p.pending = true
	p.mu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.exec.Lock()
		defer p.exec.Unlock()
		p.mu.Lock()
		p.pending = false // asks from now on need another pass: this one may have read already
		p.mu.Unlock()
		if ctx.Err() == nil && !Stopping(ctx) {
			fn(ctx)
		}
	}()
	return true
}

// fullPass asks for a full pass of one side (every open order, or every resource's membership)
// and returns at once. The pass runs on its own goroutine, not on the listener's worker, so that
// the event is acknowledged now — a flood neither holds the connection's prefetch window nor is
// delivered again after a lost connection — and order events and the per-resource work of other
// events go on while it runs. A pass is idempotent: the asks it coalesces lose nothing.
func (m *EventMode) fullPass(ctx context.Context, eo *eventOffering, side string) {
	u, p, fn := eo.members, &eo.membersPass, m.Membership.RunOnce
	if side == passOrders {
		u, p, fn = eo.orders, &eo.ordersPass, m.Orders.RunOnce
	}
	if u == nil {
		return
	}
	if !p.trigger(ctx, &eo.bg, func(ctx context.Context) { m.passDone(ctx, u, side, m.guarded(ctx, u, fn)) }) {
		m.Env.Metrics.EventPassesCoalesced.WithLabelValues(u.metricID(), side).Inc()
		u.Log.Debug("full pass already waiting to start; this event is covered by it", zap.String("pass", side))
	}
}

// guarded runs a background pass, turning a panic into an error (it runs on no worker or cycle
// that would recover it).
func (m *EventMode) guarded(ctx context.Context, u *Unit, fn func(context.Context, *Unit) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			m.Env.Metrics.Panics.Inc()
			u.Log.Error("full pass panicked", zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return fn(ctx, u)
}

// passDone reports a background pass that failed: in the log and among /status's last errors.
func (m *EventMode) passDone(ctx context.Context, u *Unit, side string, err error) {
	if err == nil || (errors.Is(err, context.Canceled) && ctx.Err() != nil) {
		return
	}
	u.Log.Warn(side+" reconciliation failed; the next one retries", zap.Error(err))
	m.Env.Status.Error(u.Offering.UUID, ModeEventProcess, side+" pass: "+err.Error())
}
