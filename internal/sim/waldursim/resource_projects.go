package waldursim

import (
	"slices"
	"sort"
	"time"
)

// Resource-project states: Mastermind's ResourceProject uses the resource state names.
const (
	ProjectCreating = ResourceCreating
	ProjectOK       = ResourceOK
	ProjectErred    = ResourceErred
	ProjectUpdating = ResourceUpdating
)

// ResourceProject is a sub-project of a resource (Waldur 8.0.8 and later): its users hold
// resource-project roles, and a membership backend such as rancher-kc-crd turns each one into a
// project on the provider's side. State defaults to Creating, as a new one is in Mastermind.
type ResourceProject struct {
	UUID, ResourceUUID, Name, Description, BackendID string
	State, ErrorMessage                              string
	Limits                                           map[string]any
	// Removed marks a soft-deleted resource project (is_removed); it is still listed.
	Removed           bool
	RemovedDate       time.Time
	Created, Modified time.Time
}

// RoleGrant is one user's role in a resource or a resource project (UserRole in Mastermind).
type RoleGrant struct {
	UUID, ScopeUUID, UserUUID, Role string
	Created                         time.Time
}

// MemberSyncStatus is one row stored by set_membership_sync_statuses: how one grant reached
// the provider's identity provider, as the agent reported it.
type MemberSyncStatus struct {
	UserUUID, ScopeType, ResourceProjectUUID, RoleName, State, Message string
}

// AddResourceProject stores a resource project of an existing resource.
func (s *Server) AddResourceProject(rp ResourceProject) ResourceProject {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp.UUID = s.st.idOr(rp.UUID)
	rp.ResourceUUID = s.st.mustRef("resource", rp.ResourceUUID, &s.st.resources)
	if rp.State == "" {
		rp.State = ProjectCreating
	}
	if rp.Created.IsZero() {
		rp.Created = s.now()
	}
	rp.Modified = rp.Created
	rp.Limits = cloneMap(rp.Limits)
	s.st.resourceProjects.put(rp.UUID, &rp)
	return copyResourceProject(&rp)
}

// SetResourceProjectLimits replaces the limits of a resource project.
func (s *Server) SetResourceProjectLimits(id string, limits map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, _ := s.st.resourceProjects.get(s.st.mustRef("resource project", id, &s.st.resourceProjects))
	rp.Limits, rp.Modified = cloneMap(limits), s.now()
}

// RemoveResourceProject soft-deletes a resource project, as its consumer deleting it does.
func (s *Server) RemoveResourceProject(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, _ := s.st.resourceProjects.get(s.st.mustRef("resource project", id, &s.st.resourceProjects))
	rp.Removed, rp.RemovedDate, rp.Modified = true, s.now(), s.now()
}

// GrantRole gives an existing user a role in a resource or a resource project (scope).
func (s *Server) GrantRole(scopeUUID, userUUID, role string) RoleGrant {
	s.mu.Lock()
	defer s.mu.Unlock()
	scope, ok := normUUID(scopeUUID)
	if !ok || !s.st.resources.has(scope) && !s.st.resourceProjects.has(scope) {
		panic("waldursim: unknown resource or resource project " + scopeUUID)
	}
	g := RoleGrant{UUID: s.st.newUUID(), ScopeUUID: scope, UserUUID: s.st.mustRef("user", userUUID, &s.st.users),
		Role: role, Created: s.now()}
	s.st.grants[scope] = append(s.st.grants[scope], g)
	return g
}

// RevokeRole removes a user's role in a resource or a resource project.
func (s *Server) RevokeRole(scopeUUID, userUUID, role string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	scope, _ := normUUID(scopeUUID)
	user, _ := normUUID(userUUID)
	kept := s.st.grants[scope][:0]
	for _, g := range s.st.grants[scope] {
		if g.UserUUID != user || g.Role != role {
			kept = append(kept, g)
		}
	}
	s.st.grants[scope] = kept
}

// ResourceProject returns a stored resource project.
func (s *Server) ResourceProject(id string) (ResourceProject, bool) {
	return get(s, &s.st.resourceProjects, id, copyResourceProject)
}

// MembershipSyncStatuses returns the statuses last reported for a resource, sorted by scope,
// resource project, role and user.
func (s *Server) MembershipSyncStatuses(resourceUUID string) []MemberSyncStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, _ := normUUID(resourceUUID)
	out := append([]MemberSyncStatus(nil), s.st.syncStatuses[id]...)
	key := func(m MemberSyncStatus) []string {
		return []string{m.ScopeType, m.ResourceProjectUUID, m.RoleName, m.UserUUID}
	}
	sort.Slice(out, func(i, j int) bool { return slices.Compare(key(out[i]), key(out[j])) < 0 })
	return out
}

func copyResourceProject(rp *ResourceProject) ResourceProject {
	c := *rp
	c.Limits = cloneMap(rp.Limits)
	return c
}

func (st *state) renderResourceProject(rp *ResourceProject) map[string]any {
	name := ""
	if r, ok := st.resources.get(rp.ResourceUUID); ok {
		name = r.Name
	}
	return map[string]any{
		"uuid": rp.UUID, "resource": rp.ResourceUUID, "name": rp.Name, "description": rp.Description,
		"backend_id": rp.BackendID, "state": rp.State, "error_message": rp.ErrorMessage,
		"limits": objectOrEmpty(rp.Limits), "current_usages": map[string]any{},
		"resource_uuid": rp.ResourceUUID, "resource_name": name,
		"created": ts(rp.Created), "modified": ts(rp.Modified),
		"is_removed": rp.Removed, "removed_date": nullableTS(rp.RemovedDate), "removed_by": nil,
		"removed_by_username": "", "termination_metadata": map[string]any{},
	}
}

// renderUserRole is UserRoleDetails: the grant with its user's details.
func (st *state) renderUserRole(g RoleGrant) map[string]any {
	u, _ := st.users.get(g.UserUUID)
	if u == nil {
		u = &User{UUID: g.UserUUID}
	}
	return map[string]any{
		"uuid": g.UUID, "created": ts(g.Created), "expiration_time": nil,
		"role_name": g.Role, "role_uuid": derivedUUID(g.ScopeUUID, len(g.Role)),
		"user_email": u.Email, "user_full_name": u.FullName, "user_username": u.Username,
		"user_uuid": u.UUID, "user_image": "",
		"created_by_full_name": st.me.User.FullName, "created_by_uuid": st.me.User.UUID,
	}
}
