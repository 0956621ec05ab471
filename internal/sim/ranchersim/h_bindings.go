package ranchersim

import (
	"net/http"
	"time"
)

var bindingFilters = map[string]bool{"id": true, "name": true, "projectId": true, "roleTemplateId": true, "groupPrincipalId": true,
	"groupId": true, "userId": true, "userPrincipalId": true, "namespaceId": true}

var bindingCreateFields = map[string]fieldKind{"projectId": kReference, "roleTemplateId": kReference, "groupPrincipalId": kString,
	"groupId": kReference, "userId": kReference, "userPrincipalId": kString, "name": kString}

func (s *Server) listBindings(w http.ResponseWriter, r *http.Request) {
	f := s.filters(r, "bindings.list", bindingFilters)
	base := baseURL(r)
	s.mu.Lock()
	s.reapLocked()
	var items []map[string]any
	for _, b := range s.st.sortedBindings() {
		if item := renderBinding(base, b); matches(item, f) {
			items = append(items, item)
		}
	}
	s.mu.Unlock()
	s.writeCollection(w, r, "projectRoleTemplateBinding", items)
}

func (s *Server) createBinding(w http.ResponseWriter, r *http.Request) {
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	in, ok := s.input(w, "binding.create", body, bindingCreateFields)
	if !ok {
		return
	}
	str := func(k string) string { v, _ := in[k].(string); return v }
	b := &Binding{ProjectID: str("projectId"), RoleTemplateID: str("roleTemplateId"), GroupPrincipalID: str("groupPrincipalId"),
		GroupID: str("groupId"), UserID: str("userId"), UserPrincipalID: str("userPrincipalId"), Created: time.Now()}
	subjects := 0
	for _, v := range []string{b.GroupPrincipalID, b.GroupID, b.UserID, b.UserPrincipalID} {
		if v != "" {
			subjects++
		}
	}
	switch {
	case b.ProjectID == "":
		fieldError(w, "MissingRequired", "projectId", "")
		return
	case b.RoleTemplateID == "":
		fieldError(w, "MissingRequired", "roleTemplateId", "")
		return
	case subjects != 1:
		fieldError(w, "MissingRequired", "groupPrincipalId", "exactly one of userId, userPrincipalId, groupId or groupPrincipalId is required")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reapLocked()
	if s.st.projects[b.ProjectID] == nil {
		fieldError(w, "InvalidReference", "projectId", "project "+b.ProjectID+" not found")
		return
	}
	if !s.st.roles[b.RoleTemplateID] {
		fieldError(w, "InvalidReference", "roleTemplateId", "roletemplates.management.cattle.io \""+b.RoleTemplateID+"\" not found")
		return
	}
	ns := projectPart(b.ProjectID)
	b.Name = s.st.newName("prtb-", func(n string) bool { return s.st.bindings[ns+":"+n] != nil })
	b.ID = ns + ":" + b.Name
	s.st.bindings[b.ID] = b
	writeJSON(w, http.StatusCreated, renderBinding(baseURL(r), b))
}

func (s *Server) getBinding(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reapLocked()
	b := s.st.bindings[id]
	if b == nil {
		writeError(w, http.StatusNotFound, "NotFound", "projectroletemplatebindings.management.cattle.io \""+id+"\" not found")
		return
	}
	writeJSON(w, http.StatusOK, renderBinding(baseURL(r), b))
}

// deleteBinding marks the binding deleted; it is listed, with `removed`, for Options.RemoveDelay
// (removal.go).
func (s *Server) deleteBinding(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reapLocked()
	b := s.st.bindings[id]
	if b == nil {
		writeError(w, http.StatusNotFound, "NotFound", "projectroletemplatebindings.management.cattle.io \""+id+"\" not found")
		return
	}
	if b.removing.IsZero() {
		b.removing = time.Now()
	}
	writeJSON(w, http.StatusOK, renderBinding(baseURL(r), b))
}
