package waldursim

import (
	"net/http"
)

func (s *Server) identitiesList(c *call) result {
	f := filter{c.query}
	var rows []*Identity
	for _, id := range s.st.identities.all() {
		if f.oneOf("name", id.Name) && f.uuid("offering_uuid", id.OfferingUUID) {
			rows = append(rows, id)
		}
	}
	return lazy(rows, func(id *Identity) map[string]any { return s.st.renderIdentity(c, id) })
}

// applyIdentity copies an AgentIdentityRequest body onto id after checking references.
func (s *Server) applyIdentity(c *call, id *Identity) *result {
	offering, _ := normUUID(c.str("offering"))
	if _, found := s.st.offerings.get(offering); !found {
		r := fieldError("offering", "Object with uuid="+c.str("offering")+" does not exist.")
		return &r
	}
	for _, other := range s.st.identities.all() {
		if other.Name == c.str("name") && other.UUID != id.UUID {
			r := fieldError("name", "agent identity with this name already exists.")
			return &r
		}
	}
	id.OfferingUUID, id.Name, id.Version = offering, c.str("name"), c.str("version")
	id.Dependencies = cloneAny(c.body["dependencies"])
	id.ConfigFilePath, id.ConfigFileContent = c.str("config_file_path"), c.str("config_file_content")
	id.LastRestarted = c.str("last_restarted")
	id.Modified = c.now
	return nil
}

func (s *Server) identityCreate(c *call) result {
	id := &Identity{UUID: s.st.newUUID(), Created: c.now}
	if fail := s.applyIdentity(c, id); fail != nil {
		return *fail
	}
	s.st.identities.put(id.UUID, id)
	return created(s.st.renderIdentity(c, id))
}

func (s *Server) identityUpdate(c *call) result {
	id, found := s.st.identities.get(c.params["uuid"])
	if !found {
		return notFound()
	}
	if fail := s.applyIdentity(c, id); fail != nil {
		return *fail
	}
	return ok(s.st.renderIdentity(c, id))
}

// registerService is idempotent by name within the identity: 200 for an existing service
// (its mode updated), 201 for a new one.
func (s *Server) registerService(c *call) result {
	id, found := s.st.identities.get(c.params["uuid"])
	if !found {
		return notFound()
	}
	for _, svc := range s.st.services.all() {
		if svc.IdentityUUID == id.UUID && svc.Name == c.str("name") {
			svc.Mode, svc.Modified = c.str("mode"), c.now
			return ok(s.st.renderService(c, svc))
		}
	}
	svc := &agentService{UUID: s.st.newUUID(), IdentityUUID: id.UUID, Name: c.str("name"),
		Mode: c.str("mode"), State: "Active", Created: c.now, Modified: c.now}
	s.st.services.put(svc.UUID, svc)
	return created(s.st.renderService(c, svc))
}

// registerProcessor is idempotent by name within the service.
func (s *Server) registerProcessor(c *call) result {
	svc, found := s.st.services.get(c.params["uuid"])
	if !found {
		return notFound()
	}
	for i := range svc.Processors {
		p := &svc.Processors[i]
		if p.Name == c.str("name") {
			p.BackendType, p.BackendVersion, p.Modified = c.str("backend_type"), c.str("backend_version"), c.now
			return ok(renderProcessor(c, svc, p))
		}
	}
	svc.Processors = append(svc.Processors, agentProcessor{UUID: s.st.newUUID(), Name: c.str("name"),
		BackendType: c.str("backend_type"), BackendVersion: c.str("backend_version"), Created: c.now, Modified: c.now})
	return created(renderProcessor(c, svc, &svc.Processors[len(svc.Processors)-1]))
}

// registerSubscription is idempotent by object type within the identity.
func (s *Server) registerSubscription(c *call) result {
	id, found := s.st.identities.get(c.params["uuid"])
	if !found {
		return notFound()
	}
	typ := c.str("observable_object_type")
	for _, sub := range s.st.subscriptions.all() {
		if sub.IdentityUUID == id.UUID && sub.ObjectType == typ {
			sub.Description = c.str("description")
			return ok(s.st.renderSubscription(c, sub))
		}
	}
	sub := &EventSubscription{UUID: s.st.newUUID(), IdentityUUID: id.UUID, ObjectType: typ, Description: c.str("description")}
	s.st.subscriptions.put(sub.UUID, sub)
	return created(s.st.renderSubscription(c, sub))
}

// createQueue creates the subscription's queue for (offering, object type), named like
// Mastermind: subscription_<sub>_offering_<offering>_<type>, vhost = the user's UUID.
func (s *Server) createQueue(c *call) result {
	sub, found := s.st.subscriptions.get(c.params["uuid"])
	if !found {
		return notFound()
	}
	offering, _ := normUUID(c.str("offering_uuid"))
	if _, found := s.st.offerings.get(offering); !found {
		return fieldError("offering_uuid", "Offering is not found.")
	}
	typ := c.str("object_type")
	for i := range sub.Queues {
		if q := &sub.Queues[i]; q.OfferingUUID == offering && q.ObjectType == typ {
			// Mastermind declares the queue again (idempotent), which also restores a queue
			// or broker user that went missing.
			if fail := s.declareQueue(sub, *q); fail != nil {
				return *fail
			}
			return ok(renderQueue(c, sub, q))
		}
	}
	q := EventQueue{
		UUID: s.st.newUUID(), OfferingUUID: offering, ObjectType: typ,
		QueueName: "subscription_" + sub.UUID + "_offering_" + offering + "_" + typ,
		VHost:     s.st.me.User.UUID,
	}
	if fail := s.declareQueue(sub, q); fail != nil {
		return *fail
	}
	sub.Queues = append(sub.Queues, q)
	return created(renderQueue(c, sub, &sub.Queues[len(sub.Queues)-1]))
}

func (s *Server) deleteSubscription(c *call) result {
	if _, found := s.st.subscriptions.get(c.params["uuid"]); !found {
		return notFound()
	}
	s.st.subscriptions.del(c.params["uuid"])
	return noBody(http.StatusNoContent)
}
