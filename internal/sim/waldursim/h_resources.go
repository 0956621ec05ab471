package waldursim

import (
	"net/http"
)

func (s *Server) resource(c *call) (*Resource, *result) {
	r, found := s.st.resources.get(c.params["uuid"])
	if !found {
		res := notFound()
		return nil, &res
	}
	return r, nil
}

func (s *Server) providerResourcesList(c *call) result {
	f := filter{c.query}
	var rows []*Resource
	for _, r := range s.st.resources.all() {
		customer := ""
		if p, ok := s.st.projects.get(r.ProjectUUID); ok {
			customer = p.CustomerUUID
		}
		if f.uuid("offering_uuid", r.OfferingUUID) && f.oneOf("state", r.State) &&
			f.uuid("project_uuid", r.ProjectUUID) && f.oneOf("backend_id", r.BackendID) &&
			f.uuid("customer_uuid", customer) && f.contains("name", r.Name) &&
			f.boolean("paused", r.Paused) && f.boolean("downscaled", r.Downscaled) &&
			f.boolean("restrict_member_access", r.RestrictMemberAccess) {
			rows = append(rows, r)
		}
	}
	return lazy(rows, func(r *Resource) map[string]any { return s.st.renderResource(c, r) })
}

func (s *Server) resourceRetrieve(c *call) result {
	r, miss := s.resource(c)
	if miss != nil {
		return *miss
	}
	return ok(s.st.renderResource(c, r))
}

// resourceTeam is not paginated in Mastermind: a plain list of the project's users.
func (s *Server) resourceTeam(c *call) result {
	r, miss := s.resource(c)
	if miss != nil {
		return *miss
	}
	team := s.st.renderTeam(c, r)
	out := make([]any, len(team))
	for i, m := range team {
		out[i] = m
	}
	return ok(out)
}

func (s *Server) resourceSetBackendID(c *call) result {
	r, miss := s.resource(c)
	if miss != nil {
		return *miss
	}
	id := c.str("backend_id")
	if id == r.BackendID {
		return ok(map[string]any{"status": "Resource backend_id is not changed."})
	}
	r.BackendID, r.Modified = id, c.now
	return ok(map[string]any{"status": "Resource backend_id has been changed."})
}

func (s *Server) resourceSetLimits(c *call) result {
	r, miss := s.resource(c)
	if miss != nil {
		return *miss
	}
	raw, isObject := c.body["limits"].(map[string]any)
	if !isObject {
		return fieldError("limits", "Expected a dictionary of items.")
	}
	limits := make(map[string]float64, len(raw))
	for k, v := range raw {
		n, isNum := v.(float64)
		if !isNum || n < 0 {
			return fieldError("limits", "Limit of "+k+" must be a non-negative number.")
		}
		limits[k] = n
	}
	r.Limits, r.Modified = limits, c.now
	return ok(map[string]any{"status": "Resource limits have been updated."})
}

func (s *Server) resourceSetBackendMetadata(c *call) result {
	r, miss := s.resource(c)
	if miss != nil {
		return *miss
	}
	md, isObject := c.body["backend_metadata"].(map[string]any)
	if !isObject {
		return fieldError("backend_metadata", "Expected a dictionary of items.")
	}
	r.BackendMetadata, r.Modified = cloneMap(md), c.now
	return ok(map[string]any{"status": "The backend metadata is updated"})
}

func (s *Server) resourceSetErred(c *call) result {
	r, miss := s.resource(c)
	if miss != nil {
		return *miss
	}
	if r.State == ResourceTerminated {
		return validStates(ResourceCreating, ResourceOK, ResourceErred, ResourceUpdating, ResourceTerminating)
	}
	r.State, r.Modified = ResourceErred, c.now
	r.ErrorMessage, r.ErrorTraceback = c.str("error_message"), c.str("error_traceback")
	return noBody(http.StatusOK)
}

func (s *Server) resourceSetOK(c *call) result {
	r, miss := s.resource(c)
	if miss != nil {
		return *miss
	}
	if r.State != ResourceErred {
		return validStates(ResourceErred)
	}
	r.State, r.Modified = ResourceOK, c.now
	r.ErrorMessage, r.ErrorTraceback = "", ""
	return noBody(http.StatusOK)
}

func (s *Server) resourceRefreshLastSync(c *call) result {
	r, miss := s.resource(c)
	if miss != nil {
		return *miss
	}
	r.LastSync = c.now
	return noBody(http.StatusOK)
}
