package ranchersim

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"

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

// tunnels is the remotedialer server and the connections it hijacked, by cluster id.
type tunnels struct {
	rd *remotedialer.Server

	mu       sync.Mutex
	conns    map[string]map[net.Conn]struct{}
	connects map[string]int // "agent", "agent.register", "steve": successful handshakes
}

func newTunnels(s *Server) *tunnels {
	t := &tunnels{conns: map[string]map[net.Conn]struct{}{}, connects: map[string]int{}}
	t.rd = remotedialer.New(s.authorizeTunnel, remotedialer.DefaultErrorWriter)
	return t
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

type keyHolderCtx struct{}

// authorizeTunnel is the remotedialer Authorizer: the agent's tunnel token, or the steve bearer.
func (s *Server) authorizeTunnel(r *http.Request) (string, bool, error) {
	h, _ := r.Context().Value(keyHolderCtx{}).(*keyHolder)
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
	r = r.WithContext(context.WithValue(r.Context(), keyHolderCtx{}, h))
	hw := &hijackWatch{ResponseWriter: w, s: s, h: h}
	s.tun.rd.ServeHTTP(hw, r)
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
	t.connects[kind]++
}

func (t *tunnels) forget(cluster string, c net.Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.conns[cluster], c)
	if len(t.conns[cluster]) == 0 {
		delete(t.conns, cluster)
	}
}

// drop closes every tunnel of a cluster.
func (t *tunnels) drop(cluster string) {
	t.mu.Lock()
	conns := t.conns[cluster]
	delete(t.conns, cluster)
	t.mu.Unlock()
	for c := range conns {
		_ = c.Close()
	}
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
