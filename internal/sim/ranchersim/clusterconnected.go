package ranchersim

import (
	"context"
	"io"
	"net"
	"net/http"
	"time"
)

// An imported cluster's life in Rancher once its agent connects, as these controllers of
// rancher/rancher v2.12 make it:
//
//   - pkg/controllers/management/clusterconnected: every 15 s Rancher dials the cluster's steve
//     session (client key stv-cluster-<id>) through the tunnel server with a fresh
//     http.Transport, GETs http://not-used/ping and closes the transport's idle connections; the
//     cluster is Connected only when that answers 200, and a cluster that is not connected is not
//     Ready ("Cluster agent is not connected"). So an agent session alone is not enough: the
//     steve session must accept the target "not-used:80" and answer /ping.
//   - pkg/controllers/management/clusterstats with nodesyncer: the cluster's totals are its
//     Nodes' capacity and allocatable and the pod-requests/pod-limits annotations on them
//     (collectStats).
//
// The simulator checks at once when the agent session is up, every connectedRetry while the
// check fails, and every Options.ConnectedCheckInterval (Rancher's 15 s) once the cluster is
// active; a failed check after that makes it "unavailable". State: "waiting" while not
// connected or no Node is visible, "active" once connected with a Node. Rancher keeps the
// totals current with watches through the tunnel; the simulator lists the Nodes instead, until
// the cluster is active and then every Options.StatsInterval (RefreshStats on demand).

const connectedRetry = 500 * time.Millisecond

// watchAgent follows the cluster while handshake gen is its newest and the agent session lasts.
func (s *Server) watchAgent(cid string, link *agentLink, gen int) {
	for waited := time.Duration(0); !s.tun.HasSession(cid); waited += 20 * time.Millisecond {
		if waited > 10*time.Second || !s.currentGen(cid, gen) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.setState(cid, "waiting", nil)
	var listed time.Time
	for s.currentGen(cid, gen) && s.tun.HasSession(cid) {
		wait := connectedRetry
		connected := s.pingAgent(cid)
		s.setConnected(cid, gen, connected)
		if connected && (!s.isActive(cid) || time.Since(listed) >= s.opts.StatsInterval) {
			listed = time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			s.tun.traffic.RLock()
			st, err := collectStats(ctx, link.kube)
			s.tun.traffic.RUnlock()
			cancel()
			if err == nil && st.nodes > 0 {
				s.setActive(cid, gen, st)
			}
		}
		if connected && s.isActive(cid) {
			wait = s.opts.ConnectedCheckInterval
		}
		time.Sleep(wait)
	}
}

// pingAgent is clusterconnected's hasSession: GET http://not-used/ping through the steve session.
func (s *Server) pingAgent(cid string) bool {
	key := stevePrefix + cid
	if !s.tun.HasSession(key) {
		return false
	}
	s.tun.traffic.RLock() // a simulated restart (CloseTunnels) waits for the check to finish
	defer s.tun.traffic.RUnlock()
	dial := s.tun.dialer(key)
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return dial(ctx, network, addr)
	}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second} // Rancher sets none
	resp, err := client.Get("http://not-used/ping")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == http.StatusOK
}

func (s *Server) currentGen(cid string, gen int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.st.clusters[cid]
	return c != nil && c.imp != nil && c.imp.gen == gen
}

func (s *Server) setConnected(cid string, gen int, connected bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.st.clusters[cid]
	if c == nil || c.imp == nil || c.imp.gen != gen {
		return
	}
	c.imp.connected = connected
	if !connected && c.State == "active" {
		c.State = "unavailable"
	}
}

func (s *Server) isActive(cid string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.st.clusters[cid]
	return c != nil && c.State == "active"
}

// setActive records the totals and makes the cluster active; false if gen is no longer current.
func (s *Server) setActive(cid string, gen int, st clusterStats) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.st.clusters[cid]
	if c == nil || c.imp == nil || c.imp.gen != gen || c.State == "removing" {
		return false
	}
	c.State, c.imp.stats = "active", st
	return true
}
