package ranchersim

import (
	"net/http"
	"strings"
	"time"
)

var projectFilters = map[string]bool{"id": true, "name": true, "clusterId": true, "namespaceId": true, "uuid": true, "state": true, "description": true}

var projectCreateFields = map[string]fieldKind{"name": kString, "clusterId": kReference, "description": kString,
	"annotations": kStringMap, "labels": kStringMap}

var projectUpdateFields = map[string]fieldKind{"name": kString, "description": kString, "annotations": kStringMap, "labels": kStringMap}

func (s *Server) listProjects(w http.ResponseWriter, r *http.Request) {
	f := s.filters(r, "projects.list", projectFilters)
	base := baseURL(r)
	s.mu.Lock()
	s.reapLocked()
	var items []map[string]any
	for _, p := range s.st.sortedProjects() {
		if item := renderProject(base, p); matches(item, f) {
			items = append(items, item)
		}
	}
	s.mu.Unlock()
	s.writeCollection(w, r, "project", items)
}

func (s *Server) createProject(w http.ResponseWriter, r *http.Request) {
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	in, ok := s.input(w, "project.create", body, projectCreateFields)
	if !ok {
		return
	}
	name, _ := in["name"].(string)
	cid, _ := in["clusterId"].(string)
	switch {
	case strings.TrimSpace(name) == "":
		fieldError(w, "MissingRequired", "name", "")
		return
	case cid == "":
		fieldError(w, "MissingRequired", "clusterId", "")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.clusters[cid] == nil {
		fieldError(w, "InvalidReference", "clusterId", "cluster "+cid+" not found")
		return
	}
	id := s.st.newName(cid+":p-", func(n string) bool { return s.st.projects[n] != nil })
	p := &Project{ID: id, Name: name, ClusterID: cid, Created: time.Now()}
	p.Description, _ = in["description"].(string)
	p.Annotations, _ = in["annotations"].(map[string]string)
	p.Labels, _ = in["labels"].(map[string]string)
	s.st.projects[id] = p
	s.st.addCreatorBinding(p)
	writeJSON(w, http.StatusCreated, renderProject(baseURL(r), p))
}

func (s *Server) getProject(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reapLocked()
	p := s.st.projects[id]
	if p == nil {
		writeError(w, http.StatusNotFound, "NotFound", "projects.management.cattle.io \""+projectPart(id)+"\" not found")
		return
	}
	writeJSON(w, http.StatusOK, renderProject(baseURL(r), p))
}

func (s *Server) updateProject(w http.ResponseWriter, r *http.Request, id string) {
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	in, ok := s.input(w, "project.update", body, projectUpdateFields)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reapLocked()
	p := s.st.projects[id]
	if p == nil {
		writeError(w, http.StatusNotFound, "NotFound", "projects.management.cattle.io \""+projectPart(id)+"\" not found")
		return
	}
	if v, ok := in["name"].(string); ok {
		if strings.TrimSpace(v) == "" {
			fieldError(w, "NotNullable", "name", "")
			return
		}
		p.Name = v
	}
	if v, ok := in["description"].(string); ok {
		p.Description = v
	}
	if v, ok := in["annotations"].(map[string]string); ok {
		p.Annotations = v
	}
	if v, ok := in["labels"].(map[string]string); ok {
		p.Labels = v
	}
	writeJSON(w, http.StatusOK, renderProject(baseURL(r), p))
}

// deleteProject marks the project deleted (listed as "removing" for Options.RemoveDelay, then
// gone with its bindings) and releases its namespaces as Rancher v2.12.0 does (removal.go).
func (s *Server) deleteProject(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	s.reapLocked()
	p := s.st.projects[id]
	if p == nil {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "NotFound", "projects.management.cattle.io \""+projectPart(id)+"\" not found")
		return
	}
	s.mu.Unlock()
	if err := s.releaseProjectNamespaces(r.Context(), id); err != nil {
		writeError(w, http.StatusInternalServerError, "ServerError", "releasing the namespaces of "+id+": "+err.Error())
		return
	}
	s.mu.Lock()
	if p.removing.IsZero() {
		p.removing = time.Now()
	}
	out := renderProject(baseURL(r), p)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

const projectIDKey = "field.cattle.io/projectId"

func clusterOfProject(id string) string {
	c, _, _ := strings.Cut(id, ":")
	return c
}

func projectPart(id string) string {
	if _, p, ok := strings.Cut(id, ":"); ok {
		return p
	}
	return id
}
