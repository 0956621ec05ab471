package waldursim

import (
	"net/http"
	"slices"
	"strings"
	"time"
)

// validStates is Mastermind's StateValidator message (409 Conflict).
func validStates(states ...string) result {
	return conflict("Valid states for operation: " + strings.Join(states, ", ") + ".")
}

// touchResource moves a resource to state (when given) and bumps modified.
func (st *state) touchResource(id, state string, now time.Time) {
	if r, ok := st.resources.get(id); ok {
		if state != "" {
			r.State = state
		}
		r.Modified = now
	}
}

// startExecuting applies what Mastermind does when an order starts executing for an offering
// processed by an agent: the resource of an Update/Terminate order enters Updating/Terminating.
func (st *state) startExecuting(o *Order, now time.Time) {
	o.State, o.Modified = OrderExecuting, now
	st.emitOrder(o)
	switch o.Type {
	case OrderUpdate:
		st.touchResource(o.ResourceUUID, ResourceUpdating, now)
	case OrderTerminate:
		st.touchResource(o.ResourceUUID, ResourceTerminating, now)
	}
}

// completeOrder applies set_state_done (Mastermind callbacks.resource_*_succeeded).
func (st *state) completeOrder(o *Order, now time.Time) {
	o.State, o.Modified = OrderDone, now
	st.emitOrder(o)
	r, ok := st.resources.get(o.ResourceUUID)
	if !ok {
		return
	}
	switch o.Type {
	case OrderCreate, OrderRestore:
		if o.Type == OrderCreate && len(o.Limits) > 0 {
			r.Limits = cloneFloats(o.Limits)
		}
		r.State = ResourceOK
	case OrderUpdate:
		if len(o.Limits) > 0 {
			r.Limits = cloneFloats(o.Limits)
		}
		if o.PlanUUID != "" {
			r.PlanUUID = o.PlanUUID
		}
		r.State = ResourceOK
	case OrderTerminate:
		r.State = ResourceTerminated
	}
	r.Modified = now
}

// failOrder applies set_state_erred (Mastermind callbacks.resource_*_failed): a failed
// termination leaves the resource OK, any other failure marks it Erred.
func (st *state) failOrder(o *Order, message, traceback string, now time.Time) {
	o.State, o.Modified = OrderErred, now
	o.ErrorMessage, o.ErrorTraceback = message, traceback
	st.emitOrder(o)
	if o.Type == OrderTerminate {
		st.touchResource(o.ResourceUUID, ResourceOK, now)
		return
	}
	st.touchResource(o.ResourceUUID, ResourceErred, now)
}

// rejectOrder applies reject_by_provider: a rejected Create leaves its resource Terminated.
func (st *state) rejectOrder(o *Order, comment string, now time.Time) {
	o.State, o.Modified, o.ProviderRejectionComment = OrderRejected, now, comment
	st.emitOrder(o)
	if o.Type == OrderCreate {
		st.touchResource(o.ResourceUUID, ResourceTerminated, now)
	}
}

func (s *Server) order(c *call) (*Order, *result) {
	o, found := s.st.orders.get(c.params["uuid"])
	if !found {
		r := notFound()
		return nil, &r
	}
	return o, nil
}

// ordersList answers newest first, like Mastermind's Order ordering (-created).
func (s *Server) ordersList(c *call) result {
	f := filter{c.query}
	orders := s.st.orders.all()
	slices.Reverse(orders)
	slices.SortStableFunc(orders, func(a, b *Order) int { return b.Created.Compare(a.Created) })
	var rows []*Order
	for _, o := range orders {
		customer := ""
		if p, ok := s.st.projects.get(o.ProjectUUID); ok {
			customer = p.CustomerUUID
		}
		if f.uuid("offering_uuid", o.OfferingUUID) && f.oneOf("state", o.State) && f.oneOf("type", o.Type) &&
			f.uuid("project_uuid", o.ProjectUUID) && f.uuid("resource_uuid", o.ResourceUUID) &&
			f.uuid("customer_uuid", customer) {
			rows = append(rows, o)
		}
	}
	return lazy(rows, func(o *Order) map[string]any { return s.st.renderOrder(c, o) })
}

func (s *Server) orderRetrieve(c *call) result {
	o, miss := s.order(c)
	if miss != nil {
		return *miss
	}
	return ok(s.st.renderOrder(c, o))
}

func (s *Server) orderApprove(c *call) result {
	o, miss := s.order(c)
	if miss != nil {
		return *miss
	}
	if o.State != OrderPendingProvider {
		return validStates(OrderPendingProvider)
	}
	s.st.startExecuting(o, c.now)
	return ok(map[string]any{"detail": "Order has been approved."})
}

func (s *Server) orderReject(c *call) result {
	o, miss := s.order(c)
	if miss != nil {
		return *miss
	}
	if o.State != OrderPendingProvider {
		return validStates(OrderPendingProvider)
	}
	s.st.rejectOrder(o, c.str("provider_rejection_comment"), c.now)
	return noBody(http.StatusOK)
}

func (s *Server) orderDone(c *call) result {
	o, miss := s.order(c)
	if miss != nil {
		return *miss
	}
	if o.State != OrderExecuting {
		return validStates(OrderExecuting)
	}
	s.st.completeOrder(o, c.now)
	return noBody(http.StatusOK)
}

func (s *Server) orderErred(c *call) result {
	o, miss := s.order(c)
	if miss != nil {
		return *miss
	}
	if o.State != OrderExecuting && o.State != OrderPendingProvider {
		return validStates(OrderPendingProvider, OrderExecuting)
	}
	s.st.failOrder(o, c.str("error_message"), c.str("error_traceback"), c.now)
	return noBody(http.StatusOK)
}

func (s *Server) orderSetBackendID(c *call) result {
	o, miss := s.order(c)
	if miss != nil {
		return *miss
	}
	o.BackendID, o.Modified = c.str("backend_id"), c.now
	return ok(map[string]any{"status": "Order backend_id has been changed."})
}
