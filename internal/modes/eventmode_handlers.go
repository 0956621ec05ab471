package modes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/stomp"
	wc "github.com/waldur/site-agent/internal/waldurclient"
)

// Outcomes of one event, for logs and metrics.
const (
	evHandled   = "handled"
	evDropped   = "dropped"   // nothing to do (not actionable, already handled, not ours)
	evMalformed = "malformed" // not an event this agent can read
	evFailed    = "failed"    // the work failed; reconciliation retries it
)

// errMalformed marks events that cannot be read.
var errMalformed = errors.New("malformed event")

// handler turns one event of typ into work on u (the side that owns typ).
func (m *EventMode) handler(eo *eventOffering, u *Unit, typ string) stomp.Handler {
	return func(ctx context.Context, msg stomp.Message) {
		result, err := m.dispatch(ctx, eo, u, typ, msg.Body)
		log := u.Log.With(zap.String("object_type", typ))
		switch result {
		case evMalformed:
			log.Warn("malformed event; dropped", zap.Error(err), zap.String("body", excerpt(msg.Body)))
		case evFailed:
			log.Warn("event handling failed; reconciliation will retry", zap.Error(err))
		case evDropped:
			log.Debug("event needs no work", zap.String("body", excerpt(msg.Body)))
		}
		m.Env.Metrics.EventMessages.WithLabelValues(u.metricID(), typ, result).Inc()
		m.Env.Metrics.EventHandling.WithLabelValues(typ).Observe(time.Since(msg.Received).Seconds())
	}
}

func (m *EventMode) dispatch(ctx context.Context, eo *eventOffering, u *Unit, typ string, body []byte) (string, error) {
	switch typ {
	case "order":
		return m.onOrder(ctx, eo, u, body)
	case "user_role":
		return m.onRole(ctx, u, body)
	case "resource":
		var ev struct {
			ResourceUUID string `json:"resource_uuid"`
		}
		if err := decode(body, &ev); err != nil || !isUUID(ev.ResourceUUID) {
			return evMalformed, orMalformed(err, "resource_uuid")
		}
		return m.syncResource(ctx, u, ev.ResourceUUID)
	case "service_account", "course_account":
		var ev struct {
			ProjectUUID string `json:"project_uuid"`
		}
		if err := decode(body, &ev); err != nil || !isUUID(ev.ProjectUUID) {
			return evMalformed, orMalformed(err, "project_uuid")
		}
		return m.syncProject(ctx, u, ev.ProjectUUID)
	case "offering_user":
		return m.onOfferingUser(ctx, eo, u, body)
	case syncType:
		return m.onForcedSync(ctx, eo, u, body)
	}
	return evDropped, nil
}

// onOrder processes one order. States that need no provider action are dropped before any
// REST call, and so are events about an order this process is handling or has just finished
// (the executing event that follows its own approval).
func (m *EventMode) onOrder(ctx context.Context, eo *eventOffering, u *Unit, body []byte) (string, error) {
	var ev struct {
		OrderUUID  string `json:"order_uuid"`
		OrderState string `json:"order_state"`
	}
	if err := decode(body, &ev); err != nil || !isUUID(ev.OrderUUID) {
		return evMalformed, orMalformed(err, "order_uuid")
	}
	switch ev.OrderState {
	case wc.OrderPendingProvider, wc.OrderExecuting, "":
	default:
		return evDropped, nil
	}
	release, ok := eo.claim(hex(ev.OrderUUID), ev.OrderState)
	if !ok {
		return evDropped, nil
	}
	finished, err := m.Orders.ProcessOrder(ctx, u, ev.OrderUUID)
	release(finished)
	if err != nil {
		return evFailed, err
	}
	return evHandled, nil
}

// onRole syncs the resources a role change touches: the one named, or all of the project's.
// The sync compares the whole team with the backend, so the event's own fields (granted,
// role) are not trusted beyond saying where to look.
func (m *EventMode) onRole(ctx context.Context, u *Unit, body []byte) (string, error) {
	var ev struct {
		ProjectUUID  string `json:"project_uuid"`
		ResourceUUID string `json:"resource_uuid"`
	}
	if err := decode(body, &ev); err != nil {
		return evMalformed, err
	}
	switch {
	case isUUID(ev.ResourceUUID):
		return m.syncResource(ctx, u, ev.ResourceUUID)
	case isUUID(ev.ProjectUUID):
		return m.syncProject(ctx, u, ev.ProjectUUID)
	}
	return evMalformed, orMalformed(nil, "project_uuid or resource_uuid")
}

// onOfferingUser syncs the resources a user's offering account matters for: those named by
// backend id, else every resource (the user's projects are not in the event: a full membership
// pass, asked for in the background and coalesced, see fullPass). Attribute-only changes need
// nothing: no backend here stores user attributes.
func (m *EventMode) onOfferingUser(ctx context.Context, eo *eventOffering, u *Unit, body []byte) (string, error) {
	var ev struct {
		Action     string   `json:"action"`
		BackendIDs []string `json:"resource_backend_ids"`
	}
	if err := decode(body, &ev); err != nil {
		return evMalformed, err
	}
	switch ev.Action {
	case "create", "username_set", "update", "delete":
	default:
		return evDropped, nil
	}
	if len(ev.BackendIDs) == 0 {
		m.fullPass(ctx, eo, passMembership)
		return evHandled, nil
	}
	all, err := u.Waldur.ListResources(ctx, u.Offering.UUID, wc.ResourceOK, wc.ResourceErred)
	if err != nil {
		return evFailed, fmt.Errorf("list resources: %w", err)
	}
	want := map[string]bool{}
	for _, id := range ev.BackendIDs {
		want[id] = true
	}
	var rs []wc.Resource
	for _, r := range all {
		if r.BackendID != "" && want[r.BackendID] {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return evDropped, nil
	}
	return outcome(m.Membership.SyncResources(ctx, u, rs))
}

// onForcedSync is Waldur's "sync resources" button: a full order pass and a full membership
// pass (which also recreates backend objects that went missing), asked for in the background and
// coalesced (fullPass).
func (m *EventMode) onForcedSync(ctx context.Context, eo *eventOffering, u *Unit, body []byte) (string, error) {
	var ev struct {
		OfferingUUID string `json:"offering_uuid"`
	}
	if err := decode(body, &ev); err != nil || (ev.OfferingUUID != "" && hex(ev.OfferingUUID) != hex(u.Offering.UUID)) {
		return evMalformed, orMalformed(err, "offering_uuid")
	}
	m.fullPass(ctx, eo, passOrders)
	m.fullPass(ctx, eo, passMembership)
	return evHandled, nil
}

func (m *EventMode) syncResource(ctx context.Context, u *Unit, id string) (string, error) {
	r, err := u.Waldur.GetResource(ctx, id)
	if err != nil {
		return evFailed, fmt.Errorf("fetch resource: %w", err)
	}
	if hex(r.OfferingUUID) != hex(u.Offering.UUID) || r.BackendID == "" || (r.State != wc.ResourceOK && r.State != wc.ResourceErred) {
		return evDropped, nil
	}
	return outcome(m.Membership.SyncResources(ctx, u, []wc.Resource{r}))
}

func (m *EventMode) syncProject(ctx context.Context, u *Unit, project string) (string, error) {
	rs, err := u.Waldur.ListProjectResources(ctx, u.Offering.UUID, project, wc.ResourceOK, wc.ResourceErred)
	if err != nil {
		return evFailed, fmt.Errorf("list project resources: %w", err)
	}
	if len(rs) == 0 {
		return evDropped, nil
	}
	return outcome(m.Membership.SyncResources(ctx, u, rs))
}

func outcome(err error) (string, error) {
	if err != nil {
		return evFailed, err
	}
	return evHandled, nil
}

// claim marks an order as being handled by an event; it refuses orders already being handled
// and executing-events of orders this process finished in the last ten minutes.
func (eo *eventOffering) claim(order, state string) (release func(finished bool), ok bool) {
	const remember = 10 * time.Minute
	eo.mu.Lock()
	defer eo.mu.Unlock()
	if eo.inflight[order] {
		return nil, false
	}
	if at, done := eo.finished[order]; done && state == wc.OrderExecuting && time.Since(at) < remember {
		return nil, false
	}
	eo.inflight[order] = true
	return func(finished bool) {
		eo.mu.Lock()
		defer eo.mu.Unlock()
		delete(eo.inflight, order)
		if !finished {
			return
		}
		now := time.Now()
		eo.finished[order] = now
		if len(eo.finished) > 1000 {
			for k, at := range eo.finished {
				if now.Sub(at) > remember {
					delete(eo.finished, k)
				}
			}
		}
	}, true
}

// decode reads a JSON object into v; wrong types are errors, unknown fields are not (Waldur
// adds fields over time).
func decode(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return fmt.Errorf("%w: not a JSON object", errMalformed)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %v", errMalformed, err)
	}
	return nil
}

func orMalformed(err error, field string) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: %s missing or not a UUID", errMalformed, field)
}

func isUUID(s string) bool {
	h := hex(s)
	if len(h) != 32 {
		return false
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// excerpt is the start of a message body, fit for a log line.
func excerpt(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	return secret.Scrub(string(b))
}
