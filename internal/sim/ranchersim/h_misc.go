package ranchersim

import (
	"net/http"
	"sort"
	"strings"
)

// schemaDef is the part of a norman schema that clients read.
type schemaDef struct {
	id, plural, collection string
	collectionMethods      []string
	resourceMethods        []string
	fields                 map[string]map[string]any
}

func field(typ string, create, update, required bool) map[string]any {
	return map[string]any{"type": typ, "create": create, "update": update, "required": required, "nullable": !required}
}

var schemaDefs = []schemaDef{
	{id: "cluster", plural: "clusters", collection: "clusters", collectionMethods: []string{"GET", "POST"}, resourceMethods: []string{"GET", "DELETE"},
		fields: map[string]map[string]any{"name": field("string", true, false, true), "state": field("string", false, false, false),
			"description": field("string", true, false, false)}},
	{id: "clusterRegistrationToken", plural: "clusterRegistrationTokens", collection: "clusterregistrationtokens",
		collectionMethods: []string{"GET", "POST"}, resourceMethods: []string{"GET"}, fields: map[string]map[string]any{
			"clusterId": field("reference[cluster]", true, false, true), "token": field("string", false, false, false),
			"manifestUrl": field("string", false, false, false)}},
	{id: "project", plural: "projects", collection: "projects", collectionMethods: []string{"GET", "POST"},
		resourceMethods: []string{"GET", "PUT", "DELETE"}, fields: map[string]map[string]any{
			"name": field("string", true, true, true), "clusterId": field("reference[cluster]", true, false, true),
			"description": field("string", true, true, false), "annotations": field("map[string]", true, true, false),
			"labels": field("map[string]", true, true, false)}},
	{id: "projectRoleTemplateBinding", plural: "projectRoleTemplateBindings", collection: "projectroletemplatebindings",
		collectionMethods: []string{"GET", "POST"}, resourceMethods: []string{"GET", "DELETE"}, fields: map[string]map[string]any{
			"projectId": field("reference[project]", true, false, true), "roleTemplateId": field("reference[roleTemplate]", true, false, true),
			"groupPrincipalId": field("reference[principal]", true, false, false), "groupId": field("reference[group]", true, false, false),
			"userId": field("reference[user]", true, false, false), "userPrincipalId": field("reference[principal]", true, false, false)}},
	{id: "token", plural: "tokens", collection: "tokens", collectionMethods: []string{"GET"}, resourceMethods: []string{"GET"},
		fields: map[string]map[string]any{"name": field("string", false, false, false), "expiresAt": field("string", false, false, false)}},
}

func renderSchema(base string, d schemaDef) map[string]any {
	return map[string]any{"id": d.id, "type": "schema", "pluralName": d.plural,
		"links":             map[string]string{"self": base + "/v3/schemas/" + d.id, "collection": base + "/v3/" + d.collection},
		"collectionMethods": d.collectionMethods, "resourceMethods": d.resourceMethods, "resourceFields": d.fields,
		"version": map[string]any{"group": "management.cattle.io", "version": "v3", "path": "/v3"}}
}

func (s *Server) handleRoot(w http.ResponseWriter, r *http.Request) {
	base := baseURL(r)
	w.Header().Set("X-API-Schemas", base+"/v3/schemas")
	links := map[string]string{"self": base + "/v3", "schemas": base + "/v3/schemas"}
	for _, d := range schemaDefs {
		links[d.plural] = base + "/v3/" + d.collection
	}
	writeJSON(w, http.StatusOK, map[string]any{"type": "collection", "resourceType": "apiRoot", "links": links,
		"actions": map[string]string{}, "data": []any{}})
}

func (s *Server) handleSchemas(w http.ResponseWriter, r *http.Request) {
	base := baseURL(r)
	w.Header().Set("X-API-Schemas", base+"/v3/schemas")
	var items []map[string]any
	for _, d := range schemaDefs {
		items = append(items, renderSchema(base, d))
	}
	writeJSON(w, http.StatusOK, map[string]any{"type": "collection", "resourceType": "schema",
		"links": map[string]string{"self": base + "/v3/schemas"}, "actions": map[string]string{}, "data": items})
}

func (s *Server) handleSchema(w http.ResponseWriter, r *http.Request, id string) {
	for _, d := range schemaDefs {
		if strings.EqualFold(d.id, id) {
			writeJSON(w, http.StatusOK, renderSchema(baseURL(r), d))
			return
		}
	}
	writeError(w, http.StatusNotFound, "NotFound", "schema "+id+" not found")
}

func (s *Server) handleClusters(w http.ResponseWriter, r *http.Request) {
	f := s.filters(r, "clusters.list", map[string]bool{"id": true, "name": true, "state": true})
	base := baseURL(r)
	s.mu.Lock()
	ids := make([]string, 0, len(s.st.clusters))
	for id := range s.st.clusters {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var items []map[string]any
	for _, id := range ids {
		if item := renderCluster(base, s.st.clusters[id]); matches(item, f) {
			items = append(items, item)
		}
	}
	s.mu.Unlock()
	s.writeCollection(w, r, "cluster", items)
}

func (s *Server) handleCluster(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.st.clusters[id]
	if c == nil {
		writeError(w, http.StatusNotFound, "NotFound", "clusters.management.cattle.io \""+id+"\" not found")
		return
	}
	writeJSON(w, http.StatusOK, renderCluster(baseURL(r), c))
}

func (s *Server) renderToken(base string) map[string]any {
	self := base + "/v3/tokens/" + s.opts.AccessKey
	return map[string]any{"id": s.opts.AccessKey, "type": "token", "name": s.opts.AccessKey, "enabled": true, "expired": false,
		"expiresAt": s.opts.TokenExpiresAt, "links": map[string]string{"self": self}, "actions": map[string]string{}}
}

// handleToken shows the caller's own token (others are 404, as for a non-admin user).
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request, name string) {
	if name != s.opts.AccessKey {
		writeError(w, http.StatusNotFound, "NotFound", "tokens.management.cattle.io \""+name+"\" not found")
		return
	}
	writeJSON(w, http.StatusOK, s.renderToken(baseURL(r)))
}

func (s *Server) listTokens(w http.ResponseWriter, r *http.Request) {
	s.writeCollection(w, r, "token", []map[string]any{s.renderToken(baseURL(r))})
}
