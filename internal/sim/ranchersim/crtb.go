package ranchersim

import (
	"net/http"
	"sort"
	"strings"
	"time"
)

// clusterRoleTemplateBindings (/v3/clusterroletemplatebindings): a role template on a cluster
// for a user or a group principal (e.g. keycloakoidc_group://<name>). Ids are
// <cluster>:crtb-xxxxx; the role template must exist (Options.RoleTemplates, plus Rancher's
// cluster-owner and cluster-member).

type crtb struct {
	id, name, clusterID, roleTemplateID, groupPrincipalID, userPrincipalID string
	created                                                                time.Time
}

func (s *Server) crtbRoutes(p []string) map[string]route {
	switch {
	case len(p) == 1 && p[0] == "clusterroletemplatebindings":
		return map[string]route{http.MethodGet: {"crtbs.list", s.listCRTBs}, http.MethodPost: {"crtb.create", s.createCRTB}}
	case len(p) == 2 && p[0] == "clusterroletemplatebindings":
		id := p[1]
		return map[string]route{
			http.MethodGet:    {"crtb.get", func(w http.ResponseWriter, r *http.Request) { s.getCRTB(w, r, id) }},
			http.MethodDelete: {"crtb.delete", func(w http.ResponseWriter, r *http.Request) { s.deleteCRTB(w, r, id) }},
		}
	}
	return nil
}

func renderCRTB(base string, b *crtb) map[string]any {
	self := base + "/v3/clusterroletemplatebindings/" + b.id
	return map[string]any{"id": b.id, "type": "clusterRoleTemplateBinding", "baseType": "clusterRoleTemplateBinding",
		"name": b.name, "namespaceId": b.clusterID, "clusterId": b.clusterID, "roleTemplateId": b.roleTemplateID,
		"groupPrincipalId": nilIfEmpty(b.groupPrincipalID), "userPrincipalId": nilIfEmpty(b.userPrincipalID),
		"created": b.created.UTC().Format(time.RFC3339), "state": "active",
		"links": map[string]string{"self": self, "remove": self}, "actions": map[string]string{}}
}

var crtbFields = map[string]fieldKind{"clusterId": kReference, "roleTemplateId": kReference, "groupPrincipalId": kString,
	"userPrincipalId": kString, "name": kString}

func (s *Server) createCRTB(w http.ResponseWriter, r *http.Request) {
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	in, ok := s.input(w, "crtb.create", body, crtbFields)
	if !ok {
		return
	}
	str := func(k string) string { v, _ := in[k].(string); return v }
	b := &crtb{clusterID: str("clusterId"), roleTemplateID: str("roleTemplateId"), groupPrincipalID: str("groupPrincipalId"),
		userPrincipalID: str("userPrincipalId"), created: time.Now()}
	switch {
	case b.clusterID == "":
		fieldError(w, "MissingRequired", "clusterId", "")
		return
	case b.roleTemplateID == "":
		fieldError(w, "MissingRequired", "roleTemplateId", "")
		return
	case (b.groupPrincipalID == "") == (b.userPrincipalID == ""):
		fieldError(w, "InvalidOption", "groupPrincipalId", "exactly one of groupPrincipalId and userPrincipalId")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	if s.st.clusters[b.clusterID] == nil {
		fieldError(w, "InvalidReference", "clusterId", "cluster "+b.clusterID+" not found")
		return
	}
	if !s.st.roles[b.roleTemplateID] && b.roleTemplateID != "cluster-owner" && b.roleTemplateID != "cluster-member" {
		fieldError(w, "InvalidReference", "roleTemplateId", "role template "+b.roleTemplateID+" not found")
		return
	}
	b.name = str("name")
	if b.name == "" {
		b.name = s.st.newName("crtb-", func(n string) bool { return s.crtbs[b.clusterID+":"+n] != nil })
	}
	b.id = b.clusterID + ":" + b.name
	if s.crtbs[b.id] != nil {
		fieldError(w, "NotUnique", "name", "")
		return
	}
	s.crtbs[b.id] = b
	writeJSON(w, http.StatusCreated, renderCRTB(baseURL(r), b))
}

var crtbFilters = map[string]bool{"clusterId": true, "roleTemplateId": true, "groupPrincipalId": true, "userPrincipalId": true, "name": true, "id": true}

func (s *Server) listCRTBs(w http.ResponseWriter, r *http.Request) {
	f := s.filters(r, "crtbs.list", crtbFilters)
	base := baseURL(r)
	s.mu.Lock()
	s.expireLocked()
	ids := make([]string, 0, len(s.crtbs))
	for id := range s.crtbs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var items []map[string]any
	for _, id := range ids {
		if item := renderCRTB(base, s.crtbs[id]); matches(item, f) {
			items = append(items, item)
		}
	}
	s.mu.Unlock()
	s.writeCollection(w, r, "clusterRoleTemplateBinding", items)
}

func (s *Server) getCRTB(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.crtbs[id]; b != nil {
		writeJSON(w, http.StatusOK, renderCRTB(baseURL(r), b))
		return
	}
	writeError(w, http.StatusNotFound, "NotFound", `clusterroletemplatebindings.management.cattle.io "`+id+`" not found`)
}

func (s *Server) deleteCRTB(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.crtbs[id]
	if b == nil {
		writeError(w, http.StatusNotFound, "NotFound", `clusterroletemplatebindings.management.cattle.io "`+id+`" not found`)
		return
	}
	delete(s.crtbs, id)
	writeJSON(w, http.StatusOK, renderCRTB(baseURL(r), b))
}

// removeClusterObjectsLocked deletes a cluster's nodes and bindings (s.mu held).
func (s *Server) removeClusterObjectsLocked(cid string) {
	delete(s.kubeconfigs, cid)
	for id, n := range s.nodes {
		if n.clusterID == cid {
			delete(s.nodes, id)
		}
	}
	for id := range s.crtbs {
		if strings.HasPrefix(id, cid+":") {
			delete(s.crtbs, id)
		}
	}
}
