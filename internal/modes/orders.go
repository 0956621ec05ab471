package modes

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
	wc "github.com/waldur/site-agent/internal/waldurclient"
)

// Orders is the order_process mode: approve pending orders and execute Create, Restore, Update
// and Terminate orders on the backend.
type Orders struct{ Env *Env }

// Name implements Mode.
func (*Orders) Name() string { return ModeOrderProcess }

// RunOnce lists the offering's open orders and works through them: orders of different
// resources in parallel (bounded), orders of one resource in creation order.
func (m *Orders) RunOnce(ctx context.Context, u *Unit) error {
	if _, err := backendReady(ctx, m.Env, u, "orders left untouched"); err != nil {
		return err
	}
	orders, err := u.Waldur.ListOrders(ctx, u.Offering.UUID, wc.OrderPendingProvider, wc.OrderExecuting)
	if err != nil {
		return fmt.Errorf("list orders: %w", err)
	}
	m.listed(u, len(orders))
	if len(orders) == 0 {
		return nil
	}
	u.Log.Info("processing orders", zap.Int("count", len(orders)))
	teams := newTeamCache(u.Waldur)
	forEach(ctx, m.Env.Concurrency, groupOrders(orders), func(group []wc.Order) {
		unlock, free := u.locks.tryLock(orderKey(group[0]))
		if !free {
			u.Log.Debug("orders of a resource are being handled by an event; skipped this pass", zap.String("order", group[0].UUID))
			return
		}
		defer unlock()
		for i, o := range group {
			if i > 0 && Stopping(ctx) {
				return
			}
			if !m.process(ctx, u, teams, o) {
				return // a later order of the same resource must wait for this one
			}
		}
	})
	return nil
}

// ProcessOrder handles one order now, as a polling pass would (event mode): it fetches the
// order and, when it waits for the provider or is executing, approves, executes and finishes
// it. Orders of one resource are worked on one at a time, also against a pass running at the
// same moment. finished says the order reached a final state (or already had one).
func (m *Orders) ProcessOrder(ctx context.Context, u *Unit, orderUUID string) (finished bool, err error) {
	o, err := u.Waldur.GetOrder(ctx, orderUUID)
	if err != nil {
		return false, fmt.Errorf("fetch order: %w", err)
	}
	if hex(o.OfferingUUID) != hex(u.Offering.UUID) {
		return false, failure.Errorf("order %s belongs to offering %s, not to this one", o.UUID, o.OfferingUUID)
	}
	if step, _ := planOrder(o); step == stepSkip {
		return true, nil
	}
	unlock, waited, err := u.locks.lock(ctx, orderKey(o))
	if err != nil {
		return false, err
	}
	defer unlock()
	if waited { // someone else worked on this resource meanwhile: look again
		if o, err = u.Waldur.GetOrder(ctx, orderUUID); err != nil {
			return false, fmt.Errorf("fetch order: %w", err)
		}
		if step, _ := planOrder(o); step == stepSkip {
			return true, nil
		}
	}
	if _, err := backendReadyCached(ctx, m.Env, u, "order left untouched"); err != nil {
		return false, err
	}
	return m.process(ctx, u, newTeamCache(u.Waldur), o), nil
}

// orderKey is what orders are serialised on: their resource.
func orderKey(o wc.Order) string {
	if o.ResourceUUID == "" {
		return "order:" + hex(o.UUID)
	}
	return "resource:" + hex(o.ResourceUUID)
}

// process handles one order and reports whether it reached a final state.
func (m *Orders) process(ctx context.Context, u *Unit, teams *teamCache, o wc.Order) bool {
	step, problem := planOrder(o)
	if step == stepSkip {
		return true
	}
	log := u.Log.With(zap.String("order", o.UUID), zap.String("type", o.Type), zap.String("resource", o.ResourceUUID))
	ctx, done := m.working(ctx, u, o)
	defer done()
	switch step {
	case stepReject:
		log.Warn("rejecting malformed order", zap.String("reason", problem))
		return m.finish(ctx, u, log, o, "rejected", u.Waldur.RejectOrder(ctx, o.UUID, problem))
	case stepErr:
		log.Warn("failing malformed order", zap.String("reason", problem))
		return m.finish(ctx, u, log, o, "erred", u.Waldur.SetOrderErred(ctx, o.UUID, problem, ""))
	case stepApprove:
		proceed, done := m.approve(ctx, u, log, o)
		if !proceed {
			return done
		}
	}
	err := m.execute(ctx, u, log, teams, o)
	switch {
	case err == nil:
		return m.finish(ctx, u, log, o, "done", u.Waldur.SetOrderDone(ctx, o.UUID))
	case failure.IsTransient(err) || errors.Is(err, context.Canceled):
		log.Warn("order hit a temporary failure; it stays executing and is retried next cycle", zap.Error(err))
		m.Env.Metrics.Orders.WithLabelValues(u.metricID(), o.Type, "retry").Inc()
		m.failed(u, o, err, false)
		return false
	default:
		msg := m.Env.publicError(err)
		log.Error("order failed", zap.Error(err))
		m.failed(u, o, err, true)
		return m.finish(ctx, u, log, o, "erred", u.Waldur.SetOrderErred(ctx, o.UUID, msg, ""))
	}
}

// approve evaluates and approves a pending order. proceed says whether to execute it now; done
// whether the order is finished (rejected).
func (m *Orders) approve(ctx context.Context, u *Unit, log *zap.Logger, o wc.Order) (proceed, done bool) {
	if ev := u.Backend.Evaluator; ev != nil {
		res := backends.Resource{UUID: hex(o.ResourceUUID), Name: o.ResourceName, ProjectSlug: o.ProjectSlug,
			CustomerSlug: o.CustomerSlug, Attributes: o.Attributes}
		dec, why, err := ev.Evaluate(ctx, backends.OrderReview{Type: o.Type, Resource: withOrder(res, o, u.Components())})
		switch {
		case err != nil:
			log.Warn("order evaluation failed; order stays pending", zap.Error(err))
			return false, false
		case dec == backends.Reject:
			log.Info("backend rejected order", zap.String("reason", why))
			return false, m.finish(ctx, u, log, o, "rejected", u.Waldur.RejectOrder(ctx, o.UUID, why))
		case dec == backends.Defer:
			log.Info("backend deferred order", zap.String("reason", why))
			m.Env.Metrics.Orders.WithLabelValues(u.metricID(), o.Type, "deferred").Inc()
			return false, false
		}
	}
	if err := u.Waldur.ApproveOrder(ctx, o.UUID); err != nil {
		// A lost response to an earlier approval looks like a conflict now: look at the order.
		if state, serr := u.Waldur.OrderState(ctx, o.UUID); serr == nil && state == wc.OrderExecuting {
			return true, false
		}
		log.Warn("order approval failed; order stays pending", zap.Error(err))
		return false, false
	}
	log.Info("order approved")
	return true, false
}

// finish records the outcome of a state-changing call. A failed call is checked against the
// order's state: when the change already happened (a lost response), it counts as done.
func (m *Orders) finish(ctx context.Context, u *Unit, log *zap.Logger, o wc.Order, result string, err error) bool {
	if err != nil {
		want := map[string]string{"done": wc.OrderDone, "erred": wc.OrderErred, "rejected": wc.OrderRejected}[result]
		state, serr := u.Waldur.OrderState(ctx, o.UUID)
		if serr != nil || state != want {
			log.Warn("could not record order outcome; will retry", zap.String("outcome", result), zap.Error(err))
			return false
		}
	}
	m.Env.Metrics.Orders.WithLabelValues(u.metricID(), o.Type, result).Inc()
	m.finished(u)
	log.Info("order finished", zap.String("outcome", result))
	return true
}
