package vclusters

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/vclusters/tunnel"
)

// startTunnel opens the cluster's agent (and steve) sessions with the agent's credentials.
func (m *Manager) startTunnel(c *cluster, creds agentCreds) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.tun != nil || c.proxy == nil {
		return
	}
	p := c.proxy
	name := c.rec.Name
	cfg := tunnel.Config{
		Cluster: name, Server: creds.server, Token: creds.regToken, Registered: c.rec.Registered,
		Params: func() (tunnel.ClusterParams, error) {
			return tunnel.ClusterParams{Address: p.Addr(), Token: creds.saToken.Reveal(), CAPEM: m.ca.PEM}, nil
		},
		ProxyAddr: p.Addr,
		AgentDial: (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLS:       m.rancher.TLSConfig(), Throttle: m.throttle, Logger: m.log,
		Backoff: tunnel.Backoff{Min: m.cfg.Tunnel.BackoffMin, Max: m.cfg.Tunnel.BackoffMax},
		Events: tunnel.Events{
			Up:         func(k tunnel.Kind) { m.sessionUp(c, k) },
			Down:       func(k tunnel.Kind, err error) { m.sessionDown(c, k, err) },
			Failed:     func(k tunnel.Kind, err error) { m.handshakeFailed(c, k, err) },
			Registered: func() { m.update(c, func(r *Record) { r.Registered = true }) },
			Dial: func(k tunnel.Kind, ok bool) {
				m.met.Dials.WithLabelValues(string(k), map[bool]string{true: "allowed", false: "denied"}[ok]).Inc()
			},
		},
	}
	if m.cfg.Tunnel.Steve {
		cfg.SteveDial = p.DialPipe
	}
	c.tun = tunnel.Start(c.ctx, cfg)
}

func (m *Manager) sessionUp(c *cluster, k tunnel.Kind) {
	m.met.Connects.WithLabelValues(string(k), "ok").Inc()
	m.met.Sessions.WithLabelValues(string(k)).Inc()
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.everUp[k] {
		m.met.Reconnects.WithLabelValues(string(k)).Inc()
	}
	c.up[k], c.everUp[k] = true, true
	if k != tunnel.Agent {
		return
	}
	c.connectedAt = time.Now()
	if !c.accepted.IsZero() {
		m.met.Setup.Observe(time.Since(c.accepted).Seconds())
		c.accepted = time.Time{}
	}
	m.setStatusLocked(c, StatusConnected, "")
	m.log.Info("tunnel connected", zap.String("cluster", c.rec.Name), zap.String("session", string(k)))
}

func (m *Manager) sessionDown(c *cluster, k tunnel.Kind, err error) {
	m.met.Sessions.WithLabelValues(string(k)).Dec()
	m.mu.Lock()
	defer m.mu.Unlock()
	c.up[k] = false
	if c.ctx.Err() != nil {
		return
	}
	m.log.Info("tunnel dropped, reconnecting", zap.String("cluster", c.rec.Name), zap.String("session", string(k)), zap.Error(err))
	if k == tunnel.Agent {
		m.setStatusLocked(c, StatusConnecting, "agent session dropped")
	}
}

// handshakeFailed counts a failed handshake; a refusal may mean Rancher deleted the cluster,
// so the deletion watcher is asked to look now.
func (m *Manager) handshakeFailed(c *cluster, k tunnel.Kind, err error) {
	var he *tunnel.HandshakeError
	refused := errors.As(err, &he)
	result := "error"
	if refused {
		result = "refused"
	}
	m.met.Connects.WithLabelValues(string(k), result).Inc()
	if errors.Is(err, context.Canceled) {
		return
	}
	if k == tunnel.Agent {
		m.setStatus(c, StatusConnecting, "tunnel handshake failed: "+err.Error())
	}
	if refused {
		// e.g. Rancher's 400 "Operation cannot be fulfilled on clusters.management.cattle.io …:
		// the object has been modified" at /v3/connect/register (an optimistic-lock conflict
		// while it records the agent), or 400 "cluster not found" for a deleted cluster: the
		// session retries with backoff either way.
		m.log.Info("rancher refused the tunnel handshake, retrying", zap.String("cluster", c.rec.Name), zap.String("session", string(k)),
			zap.Int("status", he.Status), zap.String("answer", he.Body))
	}
	if refused && he.Status >= http.StatusBadRequest && he.Status < http.StatusInternalServerError {
		select {
		case m.deletion <- struct{}{}:
		default:
		}
	}
}
