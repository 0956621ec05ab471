package waldursim

import (
	"encoding/json"
	"net/http"
	"time"
)

// EventBroker is where the simulator delivers events to agents. Real Waldur declares each
// subscription's queue through RabbitMQ's management API (the subscription is the broker user,
// the subscriber's token its password, the user's UUID the virtual host) and publishes to it
// when orders, roles, resources, accounts or offering users change. stompsim.Broker (in
// process) and the tier-2 RabbitMQ broker (internal/testenv/rmqenv) implement it.
type EventBroker interface {
	DeclareQueue(vhost, user, password, queue string) error
	Publish(vhost, queue string, body []byte) error
}

// PublishedEvent is one event the simulator published (or tried to).
type PublishedEvent struct {
	ObjectType, OfferingUUID, Queue string
	Body                            map[string]any
	At                              time.Time
	Err                             error // the broker's error, when publishing failed
}

// event is a change waiting to be published once the state lock is released.
type event struct {
	objectType, offering string
	body                 map[string]any
}

// emit records an event for every queue of that object type and offering. Caller holds s.mu.
func (st *state) emit(objectType, offering string, body map[string]any) {
	st.pending = append(st.pending, event{objectType: objectType, offering: offering, body: body})
}

// target is one queue an event goes to.
type target struct{ vhost, queue string }

// flushEvents publishes pending events outside the state lock, in order.
func (s *Server) flushEvents() {
	s.mu.Lock()
	pending := s.st.pending
	s.st.pending = nil
	var plan [][]target
	for _, ev := range pending {
		plan = append(plan, s.st.targets(ev))
	}
	s.mu.Unlock()
	for i, ev := range pending {
		body, _ := json.Marshal(ev.body)
		for _, t := range plan[i] {
			var err error
			if s.opts.Broker != nil {
				err = s.opts.Broker.Publish(t.vhost, t.queue, body)
			}
			if err != nil {
				s.logf("waldursim: publishing %s event to %s failed: %v", ev.objectType, t.queue, err)
			}
			s.mu.Lock()
			s.published = append(s.published, PublishedEvent{ObjectType: ev.objectType, OfferingUUID: ev.offering,
				Queue: t.queue, Body: ev.body, At: time.Now(), Err: err})
			s.mu.Unlock()
		}
	}
}

func (st *state) targets(ev event) []target {
	var out []target
	for _, sub := range st.subscriptions.all() {
		if sub.ObjectType != ev.objectType {
			continue
		}
		for _, q := range sub.Queues {
			if q.OfferingUUID == ev.offering && q.ObjectType == ev.objectType {
				out = append(out, target{vhost: q.VHost, queue: q.QueueName})
			}
		}
	}
	return out
}

// Published returns every event published so far (to a queue), oldest first.
func (s *Server) Published() []PublishedEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]PublishedEvent(nil), s.published...)
}

// SetBrokerPassword makes create_queue give the broker users this password instead of the
// subscriber's token (credentials that do not match what the agent sends).
func (s *Server) SetBrokerPassword(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.brokerPassword = p
}

// declareQueue asks the broker for the queue, as Mastermind does before answering create_queue.
// Caller holds s.mu.
func (s *Server) declareQueue(sub *EventSubscription, q EventQueue) *result {
	if s.opts.Broker == nil {
		return nil
	}
	pass := s.brokerPassword
	if pass == "" {
		pass = s.opts.Token
	}
	if err := s.opts.Broker.DeclareQueue(q.VHost, sub.UUID, pass, q.QueueName); err != nil {
		s.logf("waldursim: declaring queue %s failed: %v", q.QueueName, err)
		r := errorResult(http.StatusBadRequest, nonFieldErrors("Failed to create queue in RabbitMQ"))
		return &r
	}
	return nil
}

func nonFieldErrors(msg string) []any { return []any{msg} }

// offeringsOfProject are the offerings with resources in a project: they hear about its roles
// and accounts.
func (st *state) offeringsOfProject(project string) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range st.resources.all() {
		if r.ProjectUUID == project && !seen[r.OfferingUUID] {
			seen[r.OfferingUUID] = true
			out = append(out, r.OfferingUUID)
		}
	}
	return out
}

func (st *state) emitOrder(o *Order) {
	st.emit("order", o.OfferingUUID, map[string]any{"order_uuid": o.UUID, "order_state": o.State,
		"order_type": o.Type, "offering_uuid": o.OfferingUUID, "resource_uuid": o.ResourceUUID})
}

func (st *state) emitRole(project, user, role string, granted bool) {
	p, _ := st.projects.get(project)
	u, _ := st.users.get(user)
	body := map[string]any{"user_uuid": user, "project_uuid": project, "role_name": role, "granted": granted}
	if p != nil {
		body["project_name"] = p.Name
	}
	if u != nil {
		body["user_username"] = u.Username
	}
	for _, off := range st.offeringsOfProject(project) {
		st.emit("user_role", off, body)
	}
}

func (st *state) emitAccount(kind, uuid, username, project, state string) {
	action := "create"
	if state != "OK" {
		action = "delete"
	}
	p, _ := st.projects.get(project)
	body := map[string]any{"account_uuid": uuid, "account_username": username, "project_uuid": project,
		"scope_type": "project", "action": action}
	if p != nil {
		body["project_name"] = p.Name
	}
	for _, off := range st.offeringsOfProject(project) {
		st.emit(kind, off, body)
	}
}

func (st *state) emitOfferingUser(ou *OfferingUser, action string) {
	var ids []any
	for _, r := range st.resources.all() {
		if r.OfferingUUID == ou.OfferingUUID && r.BackendID != "" && st.isMember(r.ProjectUUID, ou.UserUUID) {
			ids = append(ids, r.BackendID)
		}
	}
	st.emit("offering_user", ou.OfferingUUID, map[string]any{"offering_user_uuid": ou.UUID, "user_uuid": ou.UserUUID,
		"username": ou.Username, "action": action, "offering_uuid": ou.OfferingUUID, "attributes": map[string]any{},
		"changed_attributes": []any{}, "resource_backend_ids": ids})
}

func (st *state) isMember(project, user string) bool {
	_, ok := st.members[project][user]
	return ok
}

// Publish sends a raw event body to every queue of the object type and offering, as if Waldur
// had (for malformed-message tests). It returns the number of queues it went to.
func (s *Server) Publish(objectType, offeringUUID string, raw []byte) int {
	s.mu.Lock()
	off, _ := normUUID(offeringUUID)
	ts := s.st.targets(event{objectType: objectType, offering: off})
	s.mu.Unlock()
	for _, t := range ts {
		if s.opts.Broker != nil {
			_ = s.opts.Broker.Publish(t.vhost, t.queue, raw)
		}
	}
	return len(ts)
}

// NotifyResource publishes a resource event, as Waldur does when a user changes a resource.
func (s *Server) NotifyResource(id string) {
	defer s.flushEvents()
	s.mu.Lock()
	defer s.mu.Unlock()
	r, _ := s.st.resources.get(s.st.mustRef("resource", id, &s.st.resources))
	s.st.emit("resource", r.OfferingUUID, map[string]any{"resource_uuid": r.UUID})
}
