package waldursim

import (
	"encoding/json"
	"io"
	"maps"
	"strings"
	"testing"
)

// Inspection methods return deep copies and are safe for concurrent use. UUID arguments may
// have dashes.

func copyOrder(o *Order) Order {
	c := *o
	c.Limits, c.Attributes = cloneFloats(o.Limits), cloneMap(o.Attributes)
	return c
}

func copyResource(r *Resource) Resource {
	c := *r
	c.Limits, c.Attributes, c.BackendMetadata = cloneFloats(r.Limits), cloneMap(r.Attributes), cloneMap(r.BackendMetadata)
	return c
}

func copyOffering(o *Offering) Offering {
	c := *o
	c.Components = append([]Component(nil), o.Components...)
	c.Plans = make([]Plan, len(o.Plans))
	for i, p := range o.Plans {
		c.Plans[i] = Plan{UUID: p.UUID, Name: p.Name, Quotas: cloneFloats(p.Quotas)}
	}
	c.PluginOptions = cloneMap(o.PluginOptions)
	c.Partitions = append([]string(nil), o.Partitions...)
	c.ExposedFields = append([]string(nil), o.ExposedFields...)
	if o.ExposedFields == nil {
		c.ExposedFields = nil
	}
	return c
}

func copyUsage(u *ComponentUsage) ComponentUsage {
	c := *u
	c.UserUsages = append([]UserUsage(nil), u.UserUsages...)
	return c
}

func get[T any, C any](s *Server, t *table[T], id string, cp func(*T) C) (C, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var zero C
	n, ok := normUUID(id)
	if !ok {
		return zero, false
	}
	v, ok := t.get(n)
	if !ok {
		return zero, false
	}
	return cp(v), true
}

func list[T any, C any](s *Server, t *table[T], cp func(*T) C) []C {
	s.mu.Lock()
	defer s.mu.Unlock()
	rows := t.all()
	out := make([]C, len(rows))
	for i, v := range rows {
		out[i] = cp(v)
	}
	return out
}

func plain[T any](v *T) T { return *v }

// Order returns a stored order.
func (s *Server) Order(id string) (Order, bool) { return get(s, &s.st.orders, id, copyOrder) }

// Orders returns all orders in creation order.
func (s *Server) Orders() []Order { return list(s, &s.st.orders, copyOrder) }

// Resource returns a stored resource.
func (s *Server) Resource(id string) (Resource, bool) {
	return get(s, &s.st.resources, id, copyResource)
}

// Resources returns all resources in creation order.
func (s *Server) Resources() []Resource { return list(s, &s.st.resources, copyResource) }

// OfferingUser returns a stored offering user.
func (s *Server) OfferingUser(id string) (OfferingUser, bool) {
	return get(s, &s.st.offeringUsers, id, plain[OfferingUser])
}

// OfferingUsers returns all offering users in creation order.
func (s *Server) OfferingUsers() []OfferingUser {
	return list(s, &s.st.offeringUsers, plain[OfferingUser])
}

// Offering returns a stored offering, including components created through the API.
func (s *Server) Offering(id string) (Offering, bool) {
	return get(s, &s.st.offerings, id, copyOffering)
}

// BackendResources returns the backend resources reported through the API.
func (s *Server) BackendResources() []BackendResource {
	return list(s, &s.st.backendResources, func(b *BackendResource) BackendResource {
		c := *b
		c.BackendMetadata = cloneAny(b.BackendMetadata)
		return c
	})
}

// EventSubscriptions returns the registered event subscriptions with their queues.
func (s *Server) EventSubscriptions() []EventSubscription {
	return list(s, &s.st.subscriptions, func(e *EventSubscription) EventSubscription {
		c := *e
		c.Queues = append([]EventQueue(nil), e.Queues...)
		return c
	})
}

// ComponentUsages returns the usage records of a resource, oldest billing period first.
func (s *Server) ComponentUsages(resourceUUID string) []ComponentUsage {
	id, _ := normUUID(resourceUUID)
	var out []ComponentUsage
	for _, u := range list(s, &s.st.usages, copyUsage) {
		if u.ResourceUUID == id {
			out = append(out, u)
		}
	}
	return out
}

// Identities returns the agent identities with their services and processor names.
func (s *Server) Identities() []Identity {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Identity
	for _, id := range s.st.identities.all() {
		c := *id
		c.Dependencies = cloneAny(id.Dependencies)
		c.Services = nil
		for _, svc := range s.st.services.all() {
			if svc.IdentityUUID != id.UUID {
				continue
			}
			names := make([]string, len(svc.Processors))
			for i, p := range svc.Processors {
				names[i] = p.Name
			}
			c.Services = append(c.Services, Service{UUID: svc.UUID, Name: svc.Name, Mode: svc.Mode, State: svc.State, Processors: names})
		}
		out = append(out, c)
	}
	return out
}

// SetCurrentUser sets the user users/me returns and its permissions.
func (s *Server) SetCurrentUser(u User, perms ...Permission) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	u.UUID = s.st.idOr(u.UUID)
	s.st.me = currentUser{User: u, Permissions: append([]Permission(nil), perms...)}
	return u
}

// SetResourceFlags sets the paused, downscaled and restrict_member_access flags of a resource,
// as a Waldur user would.
func (s *Server) SetResourceFlags(id string, paused, downscaled, restrict bool) {
	defer s.flushEvents()
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.st.resources.get(s.st.mustRef("resource", id, &s.st.resources))
	if ok {
		r.Paused, r.Downscaled, r.RestrictMemberAccess, r.Modified = paused, downscaled, restrict, s.now()
		s.st.emit("resource", r.OfferingUUID, map[string]any{"resource_uuid": r.UUID})
	}
}

// ForgetBackend empties a resource's backend id and backend metadata and renames it, as if the
// agent that made its backend object had never reported it (and a user renamed the resource
// since); name "" keeps the name.
func (s *Server) ForgetBackend(id, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.st.resources.get(s.st.mustRef("resource", id, &s.st.resources))
	if ok {
		r.BackendID, r.BackendMetadata, r.Modified = "", nil, s.now()
		if name != "" {
			r.Name = name
		}
	}
}

// SetAccountState changes the state of a service or course account (OK, Closed, Erred), as
// Waldur does when a project manager closes one; an event tells the offerings.
func (s *Server) SetAccountState(id, state string) {
	defer s.flushEvents()
	s.mu.Lock()
	defer s.mu.Unlock()
	n, _ := normUUID(id)
	if a, ok := s.st.serviceAccounts.get(n); ok {
		a.State = state
		s.st.emitAccount("service_account", a.UUID, a.Username, a.ProjectUUID, a.State)
		return
	}
	a, ok := s.st.courseAccounts.get(n)
	if !ok {
		panic("waldursim: unknown account " + id)
	}
	a.State = state
	s.st.emitAccount("course_account", a.UUID, a.Username, a.ProjectUUID, a.State)
}

// Calls counts requests that routed to an operation, by operationId: unauthenticated, refused
// and faulted ones included.
func (s *Server) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.calls)
}

// TotalCalls is the sum of Calls.
func (s *Server) TotalCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// ResetCalls zeroes the call counters.
func (s *Server) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls, s.total = map[string]int{}, 0
}

// Violations lists contract and strictness violations as "METHOD path: reason"; response
// problems (simulator bugs) start with "response:" after the path.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.violations...)
}

// ResetViolations forgets recorded violations.
func (s *Server) ResetViolations() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.violations = nil
}

// AssertNoViolations fails t if any violation was recorded.
func (s *Server) AssertNoViolations(t testing.TB) {
	t.Helper()
	if v := s.Violations(); len(v) > 0 {
		t.Errorf("waldursim recorded %d violation(s):\n  %s", len(v), strings.Join(v, "\n  "))
	}
}

// DumpJSON writes the whole simulated state as indented JSON, for debugging.
func (s *Server) DumpJSON(w io.Writer) error {
	identities := s.Identities()
	s.mu.Lock()
	st := s.st
	snapshot := map[string]any{
		"customers": st.customers.all(), "projects": st.projects.all(), "users": st.users.all(),
		"members": st.members, "offerings": st.offerings.all(), "service_providers": st.providers.all(),
		"ssh_keys": st.keys.all(), "offering_users": st.offeringUsers.all(), "resources": st.resources.all(),
		"orders": st.orders.all(), "component_usages": st.usages.all(), "user_usage_limits": st.limits.all(),
		"service_accounts": st.serviceAccounts.all(), "course_accounts": st.courseAccounts.all(),
		"identities": identities, "event_subscriptions": st.subscriptions.all(),
		"backend_resources": st.backendResources.all(), "current_user": st.me,
		"calls": s.calls, "violations": s.violations,
	}
	raw, err := json.MarshalIndent(snapshot, "", "  ")
	s.mu.Unlock()
	if err != nil {
		return err
	}
	_, err = w.Write(append(raw, '\n'))
	return err
}
