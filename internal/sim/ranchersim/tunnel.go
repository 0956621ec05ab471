package ranchersim

import (
	"bufio"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rancher/remotedialer"
)

// The agent connect endpoint, as rancher/rancher serves it (pkg/multiclustermanager/routes.go:
// /v3/connect and /v3/connect/register, unauthenticated at the HTTP level) with the authorizer
// chain of pkg/tunnelserver: the cluster agent's X-API-Tunnel-Token is looked up among the
// registration tokens (unknown → 400 "cluster not found"), its X-API-Tunnel-Params must carry
// cluster.address, cluster.token and cluster.caCert (else 400) and the session's client key is
// the cluster id (mcmauthorizer); "Authorization: Bearer stv-cluster-<token>" opens the steve
// session under the key "stv-cluster-<cluster id>" (pkg/api/steve/proxy/auth.go); anything else
// is 401. The agent's address, token and CA are what /k8s/clusters/<id>/ then uses, dialing
// "https://<address>" through the cluster's session, as Rancher's cluster manager does.

const (
	tunnelTokenHeader  = "X-API-Tunnel-Token"
	tunnelParamsHeader = "X-API-Tunnel-Params"
	stevePrefix        = "stv-cluster-"
)

// tunnels is the tunnel server: its sessions (sessions.go) and the connections it hijacked, by
// cluster id.
type tunnels struct {
	closing  sync.RWMutex                // held while a session closes; guards sessions
	sessions map[string][]*tunnelSession // by client key
	// traffic is held (read) by the simulator's own requests through a tunnel and (write) while
	// tunnels are dropped: remotedialer v0.6.1 races when a session closes while a connection of
	// it writes (rancher/remotedialer#261), and the simulator keeps its own requests out of that.
	traffic sync.RWMutex

	mu       sync.Mutex
	conns    map[string]map[net.Conn]struct{}
	served   map[net.Conn]chan struct{} // closed once the session's handler has returned
	connects map[string]int             // "agent", "agent.register", "steve": successful handshakes
	conflict int                        // /v3/connect/register handshakes still to refuse (ConflictRegistrations)
}

func newTunnels() *tunnels {
	return &tunnels{sessions: map[string][]*tunnelSession{}, conns: map[string]map[net.Conn]struct{}{},
		served: map[net.Conn]chan struct{}{}, connects: map[string]int{}}
}

// agentParams is the cluster object of X-API-Tunnel-Params.
type agentParams struct {
	address, token string
	caPEM          []byte
}

func decodeAgentParams(v string) (agentParams, error) {
	raw, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return agentParams{}, errors.New("invalid " + tunnelParamsHeader + ": not base64")
	}
	var in struct {
		Cluster *struct {
			Address string `json:"address"`
			Token   string `json:"token"`
			CACert  string `json:"caCert"`
		} `json:"cluster"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return agentParams{}, errors.New("invalid " + tunnelParamsHeader + ": not JSON")
	}
	switch {
	case in.Cluster == nil:
		return agentParams{}, errors.New("missing node or cluster registration info")
	case in.Cluster.Address == "":
		return agentParams{}, errors.New("invalid input, address empty")
	case in.Cluster.Token == "":
		return agentParams{}, errors.New("invalid input, token empty")
	case in.Cluster.CACert == "":
		return agentParams{}, errors.New("invalid input, caCert empty")
	}
	ca, err := base64.StdEncoding.DecodeString(in.Cluster.CACert)
	if err != nil {
		return agentParams{}, errors.New("invalid input, caCert is not base64")
	}
	// Rancher stores caCert and fails only when it first dials; the simulator refuses it at once.
	if !x509.NewCertPool().AppendCertsFromPEM(ca) {
		return agentParams{}, errors.New("invalid input, caCert is not a PEM certificate (simulator check)")
	}
	return agentParams{address: in.Cluster.Address, token: in.Cluster.Token, caPEM: ca}, nil
}

type keyHolder struct{ key, cluster, kind string }

// authorizeTunnel is the remotedialer Authorizer Rancher's tunnel server has: the agent's tunnel
// token, or the steve bearer; h receives the session's key.
func (s *Server) authorizeTunnel(r *http.Request, h *keyHolder) (string, bool, error) {
	if tok := r.Header.Get(tunnelTokenHeader); tok != "" {
		cid := s.clusterByToken(tok)
		if cid == "" {
			return "", false, errors.New("cluster not found")
		}
		p, err := decodeAgentParams(r.Header.Get(tunnelParamsHeader))
		if err != nil {
			return "", false, err
		}
		kind := "agent"
		if strings.HasSuffix(r.URL.Path, "/register") {
			kind = "agent.register"
			if s.takeRegisterConflict() {
				// Rancher records the agent on the management cluster object at registration and
				// can lose the optimistic-lock race (observed against v2.12.0).
				return "", false, errors.New(`Operation cannot be fulfilled on clusters.management.cattle.io "` + cid +
					`": the object has been modified; please apply your changes to the latest version and try again`)
			}
		}
		if err := s.linkAgent(cid, p); err != nil {
			return "", false, err
		}
		*h = keyHolder{key: cid, cluster: cid, kind: kind}
		return cid, true, nil
	}
	bearer := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if tok, ok := strings.CutPrefix(bearer, stevePrefix); ok {
		if cid := s.clusterByToken(tok); cid != "" {
			*h = keyHolder{key: stevePrefix + cid, cluster: cid, kind: "steve"}
			return stevePrefix + cid, true, nil
		}
	}
	return "", false, nil
}

// handleConnect serves one tunnel for as long as it lives.
func (s *Server) handleConnect(w http.ResponseWriter, r *http.Request) {
	h := &keyHolder{}
	key, authed, err := s.authorizeTunnel(r, h)
	if err != nil {
		remotedialer.DefaultErrorWriter(w, r, http.StatusBadRequest, err)
		return
	}
	if !authed {
		remotedialer.DefaultErrorWriter(w, r, http.StatusUnauthorized, errors.New("failed authentication"))
		return
	}
	hw := &hijackWatch{ResponseWriter: w, s: s, h: h}
	s.tun.serveSession(hw, r, key)
	if hw.conn == nil || h.cluster == "" {
		return
	}
	s.tun.forget(h.cluster, hw.conn)
	if h.kind != "steve" {
		s.agentGone(h.cluster)
	}
}

// hijackWatch records the connection the websocket upgrade takes over, so a deleted cluster's
// or a "restarted" server's tunnels can be closed.
type hijackWatch struct {
	http.ResponseWriter
	conn net.Conn
	s    *Server
	h    *keyHolder
}

func (hw *hijackWatch) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(hw.ResponseWriter).Hijack()
	if err == nil && hw.h.cluster != "" {
		hw.conn = c
		hw.s.tun.track(hw.h.cluster, hw.h.kind, c)
	}
	return c, rw, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (hw *hijackWatch) Unwrap() http.ResponseWriter { return hw.ResponseWriter }

// track registers an upgraded connection and counts the handshake.
func (t *tunnels) track(cluster, kind string, c net.Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conns[cluster] == nil {
		t.conns[cluster] = map[net.Conn]struct{}{}
	}
	t.conns[cluster][c] = struct{}{}
	t.served[c] = make(chan struct{})
	t.connects[kind]++
}

func (t *tunnels) forget(cluster string, c net.Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.conns[cluster], c)
	if len(t.conns[cluster]) == 0 {
		delete(t.conns, cluster)
	}
	if done := t.served[c]; done != nil {
		close(done)
		delete(t.served, c)
	}
}

// drop closes every tunnel of a cluster and waits (at most 5 s) until remotedialer has closed
// their sessions, so that none of the simulator's own requests meets a closing session.
func (t *tunnels) drop(cluster string) {
	t.traffic.Lock()
	defer t.traffic.Unlock()
	t.mu.Lock()
	var conns []net.Conn
	var served []chan struct{}
	for c := range t.conns[cluster] {
		conns = append(conns, c)
		if done := t.served[c]; done != nil {
			served = append(served, done)
		}
	}
	t.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	timeout := time.After(5 * time.Second)
	for _, done := range served {
		select {
		case <-done:
		case <-timeout:
			return
		}
	}
}

// ConflictRegistrations makes the next n /v3/connect/register handshakes answer 400 with the
// optimistic-lock conflict real Rancher can answer there.
func (s *Server) ConflictRegistrations(n int) {
	s.tun.mu.Lock()
	s.tun.conflict = n
	s.tun.mu.Unlock()
}

// LoseRegistration makes a connected imported cluster's record show no agent parameters
// (driver "", no apiEndpoint, state pending) while its sessions stay up, until the agent's next
// handshake records them again (rancher v2.12.0 pkg/tunnelserver/mcmauthorizer/tunnel.go
// authorizeCluster runs at every handshake). Seen once in the real Rancher v2.12.0 with 100
// clusters being imported on 2 cores: the cluster stayed "Waiting for API to be available" for
// over 15 minutes, Connected, until a new handshake. It reports whether the cluster had them.
func (s *Server) LoseRegistration(clusterID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.st.clusters[clusterID]
	if c == nil || c.imp == nil || c.imp.agent == nil {
		return false
	}
	c.imp.unrecorded = true
	return true
}

func (s *Server) takeRegisterConflict() bool {
	s.tun.mu.Lock()
	defer s.tun.mu.Unlock()
	if s.tun.conflict > 0 {
		s.tun.conflict--
		return true
	}
	return false
}

// publicRoute returns the handler of a route that needs no API token (nil: none).
func (s *Server) publicRoute(r *http.Request) (string, http.HandlerFunc) {
	switch p := r.URL.Path; {
	case p == "/v3/connect" || p == "/v3/connect/register":
		return "connect", s.handleConnect
	case p == RegisterEndpoint:
		return "system-agent.register", s.handleRegister
	case p == ClusterAgentEndpoint:
		return "cluster-agent.nodes", s.handleClusterAgent
	case strings.HasPrefix(p, "/v3/import/"):
		return "import", s.handleImport
	case p == SystemAgentInstallPath:
		return "system-agent-install", s.handleInstaller
	}
	return "", nil
}
