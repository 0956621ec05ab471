package ranchersim

import (
	"context"
	"net/http"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var projectFilters = map[string]bool{"id": true, "name": true, "clusterId": true, "namespaceId": true, "uuid": true, "state": true, "description": true}

var projectCreateFields = map[string]fieldKind{"name": kString, "clusterId": kReference, "description": kString,
	"annotations": kStringMap, "labels": kStringMap}

var projectUpdateFields = map[string]fieldKind{"name": kString, "description": kString, "annotations": kStringMap, "labels": kStringMap}

func (s *Server) listProjects(w http.ResponseWriter, r *http.Request) {
	f := s.filters(r, "projects.list", projectFilters)
	base := baseURL(r)
	s.mu.Lock()
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
	writeJSON(w, http.StatusCreated, renderProject(baseURL(r), p))
}

func (s *Server) getProject(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
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

// deleteProject removes the project, its bindings and (on the cluster) its namespaces.
func (s *Server) deleteProject(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	p := s.st.projects[id]
	if p == nil {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "NotFound", "projects.management.cattle.io \""+projectPart(id)+"\" not found")
		return
	}
	out := renderProject(baseURL(r), p)
	s.mu.Unlock()
	if err := s.deleteProjectNamespaces(r.Context(), id); err != nil {
		writeError(w, http.StatusInternalServerError, "ServerError", "deleting namespaces of "+id+": "+err.Error())
		return
	}
	s.mu.Lock()
	delete(s.st.projects, id)
	for bid, b := range s.st.bindings {
		if b.ProjectID == id {
			delete(s.st.bindings, bid)
		}
	}
	s.mu.Unlock()
	out["state"] = "removing"
	writeJSON(w, http.StatusOK, out)
}

// deleteProjectNamespaces deletes the namespaces assigned to project id.
func (s *Server) deleteProjectNamespaces(ctx context.Context, id string) error {
	kube := s.kubeClient(clusterOfProject(id))
	if kube == nil {
		return nil
	}
	list, err := kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: projectIDKey + "=" + projectPart(id)})
	if err != nil {
		return err
	}
	for _, ns := range list.Items {
		if ns.Annotations[projectIDKey] != "" && ns.Annotations[projectIDKey] != id {
			continue
		}
		if err := kube.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil && !isNotFound(err) {
			return err
		}
	}
	return nil
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
