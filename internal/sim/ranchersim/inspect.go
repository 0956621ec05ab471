package ranchersim

import (
	"fmt"
	"maps"
	"sort"
	"strings"
	"testing"
	"time"
)

// Calls returns the number of requests per operation since the last ResetCalls.
func (s *Server) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.calls)
}

// Total returns the number of v3 requests and Kubernetes proxy requests.
func (s *Server) Total() (v3, k8s int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for op, n := range s.calls {
		if strings.HasPrefix(op, "k8s.") {
			k8s += n
		} else {
			v3 += n
		}
	}
	return v3, k8s
}

// ResetCalls zeroes the counters.
func (s *Server) ResetCalls() {
	s.mu.Lock()
	s.calls = map[string]int{}
	s.mu.Unlock()
}

// Violations lists requests norman would have accepted while ignoring part of them (unknown
// body fields, unknown filters).
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.violations...)
}

// AssertNoViolations fails t when any request was sloppy.
func (s *Server) AssertNoViolations(t testing.TB) {
	t.Helper()
	if v := s.Violations(); len(v) > 0 {
		t.Errorf("ranchersim: %d sloppy request(s):\n  %s", len(v), strings.Join(v, "\n  "))
	}
}

// Projects returns copies of the projects made through the API or AddProject that are not being
// deleted, sorted by id (each cluster's Default and System projects are left out: removal.go).
func (s *Server) Projects() []Project {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reapLocked()
	var out []Project
	for _, p := range s.st.sortedProjects() {
		if !p.builtin && p.removing.IsZero() {
			out = append(out, clone(p))
		}
	}
	return out
}

// Bindings returns copies of the bindings made through the API that are not being deleted (nor
// their project), sorted by id (the creator bindings Rancher makes itself are left out: removal.go).
func (s *Server) Bindings() []Binding {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reapLocked()
	var out []Binding
	for _, b := range s.st.sortedBindings() {
		if p := s.st.projects[b.ProjectID]; !b.rancherMade && b.removing.IsZero() && (p == nil || p.removing.IsZero()) {
			out = append(out, *b)
		}
	}
	return out
}

// AddProject seeds a project (e.g. one made by the incumbent) and returns it.
func (s *Server) AddProject(clusterID, name string, annotations map[string]string) (Project, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.clusters[clusterID] == nil {
		return Project{}, fmt.Errorf("no cluster %s", clusterID)
	}
	id := s.st.newName(clusterID+":p-", func(n string) bool { return s.st.projects[n] != nil })
	p := &Project{ID: id, Name: name, ClusterID: clusterID, Annotations: maps.Clone(annotations), Created: time.Now()}
	s.st.projects[id] = p
	return clone(p), nil
}

// RemoveBinding deletes a binding behind the client's back (drift tests).
func (s *Server) RemoveBinding(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.st.bindings[id]
	delete(s.st.bindings, id)
	return ok
}

// RemoveProjectRecord deletes a project without Rancher's cascade (drift tests).
func (s *Server) RemoveProjectRecord(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.st.projects[id]
	delete(s.st.projects, id)
	return ok
}

// SetClusterState sets a cluster's state (e.g. "unavailable").
func (s *Server) SetClusterState(id, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.st.clusters[id]; c != nil {
		c.State = state
	}
}

// String summarises the state for failure messages.
func (s *Server) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var lines []string
	for _, p := range s.st.sortedProjects() {
		lines = append(lines, fmt.Sprintf("project %s %q %v", p.ID, p.Name, p.Annotations))
	}
	for _, b := range s.st.sortedBindings() {
		lines = append(lines, fmt.Sprintf("binding %s %s %s %s", b.ID, b.ProjectID, b.RoleTemplateID, b.GroupPrincipalID))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
