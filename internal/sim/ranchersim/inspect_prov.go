package ranchersim

import (
	"encoding/json"
	"sort"
)

// ProvisionedClusters lists the v1 provisioning clusters by name (those being deleted too).
func (s *Server) ProvisionedClusters() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	out := make([]string, 0, len(s.prov))
	for n := range s.prov {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// NodeInfo is a registered node as a test sees it.
type NodeInfo struct {
	ID, ClusterID, Name, State string
	Labels                     map[string]string
}

// Nodes lists the registered nodes (all clusters), sorted by name.
func (s *Server) Nodes() []NodeInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	out := make([]NodeInfo, 0, len(s.nodes))
	for _, n := range s.nodes {
		st, _ := s.nodeStateLocked(n)
		out = append(out, NodeInfo{ID: n.id, ClusterID: n.clusterID, Name: n.name, State: st, Labels: clonedMap(n.labels)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ClusterRoleBindings lists "clusterId roleTemplateId principal" of every binding, sorted.
func (s *Server) ClusterRoleBindings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.crtbs))
	for _, b := range s.crtbs {
		out = append(out, b.clusterID+" "+b.roleTemplateID+" "+b.groupPrincipalID+b.userPrincipalID)
	}
	sort.Strings(out)
	return out
}

func clonedMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ProvInfo is a v1 provisioning cluster as a test sees it.
type ProvInfo struct {
	Labels, Annotations map[string]string
	Spec                map[string]any // a deep copy
}

// ProvisionedCluster is the provisioning cluster called name.
func (s *Server) ProvisionedCluster(name string) (ProvInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pc := s.prov[name]
	if pc == nil {
		return ProvInfo{}, false
	}
	raw, _ := json.Marshal(pc.spec)
	var spec map[string]any
	_ = json.Unmarshal(raw, &spec)
	return ProvInfo{Labels: clonedMap(pc.labels), Annotations: clonedMap(pc.notes), Spec: spec}, true
}
