package waldursim

// Handlers of the contract addendum (addendum.go). Behaviour follows Waldur Mastermind as its
// generated client (waldur/py-client 8.1.0), its tests (marketplace/tests/test_member_sync_status.py)
// and its developer page "Membership Sync Status" describe it; where those are silent the
// comment says what is modelled and why.

func (s *Server) resourceProjectsList(c *call) result {
	f := filter{c.query}
	var rows []*ResourceProject
	for _, rp := range s.st.resourceProjects.all() {
		if f.uuid("resource_uuid", rp.ResourceUUID) && f.contains("name", rp.Name) &&
			f.oneOf("resource", c.url("marketplace-resources/"+rp.ResourceUUID+"/")) {
			rows = append(rows, rp)
		}
	}
	return lazy(rows, s.st.renderResourceProject)
}

func (s *Server) resourceProject(c *call) (*ResourceProject, *result) {
	rp, found := s.st.resourceProjects.get(c.params["uuid"])
	if !found {
		res := notFound()
		return nil, &res
	}
	return rp, nil
}

// listUsers lists the role grants of a resource or a resource project (UserRoleMixin).
func (s *Server) listUsers(c *call) result {
	id := c.params["uuid"]
	if !s.st.resources.has(id) && !s.st.resourceProjects.has(id) {
		return notFound()
	}
	rows := make([]*RoleGrant, 0, len(s.st.grants[id]))
	for i := range s.st.grants[id] {
		rows = append(rows, &s.st.grants[id][i])
	}
	return lazy(rows, func(g *RoleGrant) map[string]any { return s.st.renderUserRole(*g) })
}

// resourceProjectSetOK moves a resource project to OK and clears its error. The incumbent
// agent calls it only from Creating, Updating or Erred (its guard names the transitions
// Mastermind allows); from another state the simulator answers 409, Waldur's answer to a
// state transition that is not allowed.
func (s *Server) resourceProjectSetOK(c *call) result {
	rp, miss := s.resourceProject(c)
	if miss != nil {
		return *miss
	}
	switch rp.State {
	case ProjectCreating, ProjectUpdating, ProjectErred:
	default:
		return conflict("Resource project state transition from " + rp.State + " to OK is not allowed.")
	}
	rp.State, rp.ErrorMessage, rp.Modified = ProjectOK, "", c.now
	return ok(map[string]any{"status": "Resource project state has been set to OK."})
}

// resourceProjectSetErred moves a resource project to Erred with the message given.
func (s *Server) resourceProjectSetErred(c *call) result {
	rp, miss := s.resourceProject(c)
	if miss != nil {
		return *miss
	}
	rp.State, rp.ErrorMessage, rp.Modified = ProjectErred, c.str("error_message"), c.now
	return ok(map[string]any{"status": "Resource project state has been set to Erred."})
}

// setMembershipSyncStatuses stores a full-replace report: 409 unless the offering opted in;
// entries whose user (by username or user_uuid) or resource project cannot be resolved are
// skipped and echoed back by the identifier they gave.
func (s *Server) setMembershipSyncStatuses(c *call) result {
	r, miss := s.resource(c)
	if miss != nil {
		return *miss
	}
	if o, found := s.st.offerings.get(r.OfferingUUID); !found || o.PluginOptions["enable_membership_sync_status"] != true {
		return conflict("Membership sync status reporting is not enabled for this offering.")
	}
	entries, _ := c.body["statuses"].([]any)
	rows := make([]MemberSyncStatus, 0, len(entries))
	skipped := []any{}
	for _, raw := range entries {
		e, _ := raw.(map[string]any)
		row, ident, resolved := s.st.resolveSyncStatus(r, e)
		if ident == "" {
			return fieldError("statuses", "Each entry needs a username or a user_uuid.")
		}
		if !resolved {
			skipped = append(skipped, ident)
			continue
		}
		rows = append(rows, row)
	}
	s.st.syncStatuses[r.UUID] = rows
	return ok(map[string]any{"stored": len(rows), "skipped": skipped})
}

// resolveSyncStatus turns one report entry into a stored row; ident is how the entry named its
// user ("" when it named none).
func (st *state) resolveSyncStatus(r *Resource, e map[string]any) (row MemberSyncStatus, ident string, ok bool) {
	username, _ := e["username"].(string)
	userID, _ := e["user_uuid"].(string)
	ident = username
	if ident == "" {
		ident = userID
	}
	var user *User
	for _, u := range st.users.all() {
		if n, valid := normUUID(userID); (username != "" && u.Username == username) || (valid && u.UUID == n) {
			user = u
		}
	}
	row = MemberSyncStatus{ScopeType: str(e["scope_type"]), RoleName: str(e["role_name"]), State: str(e["state"]),
		Message: str(e["message"])}
	if user == nil {
		return row, ident, false
	}
	row.UserUUID = user.UUID
	if row.ScopeType == "resource_project" {
		rpID, _ := normUUID(str(e["resource_project_uuid"]))
		rp, found := st.resourceProjects.get(rpID)
		if !found || rp.ResourceUUID != r.UUID {
			return row, ident, false
		}
		row.ResourceProjectUUID = rp.UUID
	}
	return row, ident, true
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
