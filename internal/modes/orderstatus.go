package modes

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/telemetry"
	wc "github.com/waldur/site-agent/internal/waldurclient"
)

// pendingOrders counts an offering's open orders (pending the provider or executing): set by
// each order pass, less one for every order finished since.
type pendingOrders struct {
	mu sync.Mutex
	n  int
}

func (p *pendingOrders) set(n int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n = n
	return n
}

func (p *pendingOrders) done() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n = max(p.n-1, 0)
	return p.n
}

// orderResults are the results site_agent_orders_total counts, and orderTypes the types.
var (
	orderResults   = []string{"done", "erred", "rejected", "deferred", "retry"}
	orderTypeNames = []string{wc.OrderCreate, wc.OrderUpdate, wc.OrderTerminate, wc.OrderRestore}
)

// declare creates the offering's order series at zero.
func (m *Orders) declare(u *Unit) {
	id := u.metricID()
	for _, t := range orderTypeNames {
		for _, r := range orderResults {
			m.Env.Metrics.Orders.WithLabelValues(id, t, r)
		}
	}
	m.Env.Metrics.OrdersPending.WithLabelValues(id)
}

// listed records the open orders an order pass found.
func (m *Orders) listed(u *Unit, n int) { m.showPending(u, u.pending.set(n)) }

// finished records that an order reached a final state.
func (m *Orders) finished(u *Unit) { m.showPending(u, u.pending.done()) }

func (m *Orders) showPending(u *Unit, n int) {
	m.Env.Metrics.OrdersPending.WithLabelValues(u.metricID()).Set(float64(n))
	m.Env.Status.OrdersPending(u.Offering.UUID, n)
}

// working records an order in flight until the returned func is called, and names it (and its
// resource) in ctx, so that every backend log line written for it carries their UUIDs.
func (m *Orders) working(ctx context.Context, u *Unit, o wc.Order) (context.Context, func()) {
	m.Env.Status.OrderStarted(u.Offering.UUID, telemetry.OrderView{UUID: o.UUID, Type: o.Type, ResourceUUID: o.ResourceUUID,
		ResourceName: o.ResourceName})
	return backends.ForOrder(ctx, o.UUID, o.ResourceUUID), func() { m.Env.Status.OrderEnded(u.Offering.UUID, o.UUID) }
}

// failed records an order's failure among the last errors; final says it was marked erred.
func (m *Orders) failed(u *Unit, o wc.Order, err error, final bool) {
	if errors.Is(err, context.Canceled) {
		return // the agent is stopping
	}
	what := "temporary failure, retried next cycle"
	if final {
		what = "erred"
	}
	m.Env.Status.Error(u.Offering.UUID, "order", fmt.Sprintf("%s order %s (%s): %v", o.Type, o.UUID, what, err))
}
