package ranchersim

import (
	"context"
	"errors"
	"maps"
	"net"
	"sort"
)

// ClusterInfo is an imported cluster as tests see it.
type ClusterInfo struct {
	ID, Name, State string
	APIEndpoint     string // "https://" + the agent's address ("" before the first handshake)
	Connected       bool   // the last check through the steve session answered 200
	Nodes           int
	NotReadyNodes   int // Nodes whose Ready condition is not True
	Capacity        map[string]string
	Allocatable     map[string]string
	Requested       map[string]string // from the Nodes' pod-requests annotations
	Limits          map[string]string // from the Nodes' pod-limits annotations
}

// ImportedClusters lists the clusters created through the API, sorted by name.
func (s *Server) ImportedClusters() []ClusterInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ClusterInfo
	for _, c := range s.st.clusters {
		if c.imp == nil {
			continue
		}
		st := c.imp.stats
		ci := ClusterInfo{ID: c.ID, Name: c.Name, State: c.State, Connected: c.imp.connected, Nodes: st.nodes,
			NotReadyNodes: st.notReady, Capacity: maps.Clone(st.capacity), Allocatable: maps.Clone(st.allocatable),
			Requested: maps.Clone(st.requested), Limits: maps.Clone(st.limits)}
		if c.imp.agent != nil && !c.imp.unrecorded {
			ci.APIEndpoint = "https://" + c.imp.agent.params.address
		}
		out = append(out, ci)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ClusterByName returns the imported cluster with that name.
func (s *Server) ClusterByName(name string) (ClusterInfo, bool) {
	for _, c := range s.ImportedClusters() {
		if c.Name == name {
			return c, true
		}
	}
	return ClusterInfo{}, false
}

// DeleteCluster deletes a cluster as a Rancher user would (same cascade as the API: an imported
// cluster whose agent connected is "removing" until Rancher's cleanup through its tunnel ran).
func (s *Server) DeleteCluster(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.st.clusters[id]
	if c == nil {
		return false
	}
	s.startRemovalLocked(c)
	return true
}

// Sessions reports whether the cluster's agent and steve sessions are up.
func (s *Server) Sessions(id string) (agent, steve bool) {
	return s.tun.HasSession(id), s.tun.HasSession(stevePrefix + id)
}

// TunnelConnects counts successful handshakes by kind: "agent.register", "agent", "steve".
func (s *Server) TunnelConnects() map[string]int {
	s.tun.mu.Lock()
	defer s.tun.mu.Unlock()
	return maps.Clone(s.tun.connects)
}

// CloseTunnels closes every tunnel, as a Rancher restart does (the clients must reconnect).
// The simulator's own checks through the tunnels finish first.
func (s *Server) CloseTunnels() {
	s.tun.mu.Lock()
	ids := make([]string, 0, len(s.tun.conns))
	for id := range s.tun.conns {
		ids = append(ids, id)
	}
	s.tun.mu.Unlock()
	for _, id := range ids {
		s.tun.drop(id)
	}
}

// DialTunnel asks the cluster's agent (or, with steve, its steve session) to open a TCP
// connection to address, as Rancher does when it proxies to the cluster.
func (s *Server) DialTunnel(ctx context.Context, id string, steve bool, address string) (net.Conn, error) {
	key := id
	if steve {
		key = stevePrefix + id
	}
	if !s.tun.HasSession(key) {
		return nil, errors.New("no session for " + key)
	}
	return s.tun.dialer(key)(ctx, "tcp", address)
}

// RefreshStats reads an imported cluster's Nodes through its tunnel again, as Rancher's
// watches would (totals, Ready Nodes).
func (s *Server) RefreshStats(ctx context.Context, id string) error {
	link := s.tunnelLink(id)
	if link == nil {
		return errors.New("cluster " + id + " has no tunnel")
	}
	s.tun.traffic.RLock()
	st, err := collectStats(ctx, link.kube)
	s.tun.traffic.RUnlock()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.st.clusters[id]; c != nil && c.imp != nil {
		c.imp.stats = st
	}
	return nil
}
