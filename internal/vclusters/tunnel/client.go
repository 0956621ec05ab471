package tunnel

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/rancher/remotedialer"
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/secret"
)

// HandshakeTimeout bounds one websocket handshake (remotedialer.HandshakeTimeOut).
const HandshakeTimeout = remotedialer.HandshakeTimeOut

// Events are the callbacks of a Client; nil fields are skipped. They run on the session's
// goroutines and must not block.
type Events struct {
	Up         func(kind Kind)             // a handshake succeeded
	Down       func(kind Kind, err error)  // a session that was up ended
	Failed     func(kind Kind, err error)  // a handshake failed (err may be a *HandshakeError)
	Registered func()                      // the first agent handshake succeeded
	Dial       func(kind Kind, allow bool) // Rancher asked to open a connection
}

// Config describes one cluster's sessions.
type Config struct {
	Cluster string // for log lines
	// Server is the Rancher URL from the cattle-credentials Secret (https://host[:port]).
	Server string
	// Token is the registration token from the cattle-credentials Secret.
	Token secret.Secret
	// Params returns the agent session's current parameters (the proxy may have moved).
	Params func() (ClusterParams, error)
	// ProxyAddr returns the cluster's current API proxy address (the only dial target allowed).
	ProxyAddr func() string
	// AgentDial opens connections Rancher asks for on the agent session (nil: a net.Dialer).
	AgentDial remotedialer.Dialer
	// SteveDial opens connections Rancher asks for on the steve session; nil: no steve session.
	SteveDial remotedialer.Dialer
	// Registered says the agent connected before (then it uses /v3/connect, not /register).
	Registered bool
	TLS        *tls.Config
	Throttle   *Throttle
	Backoff    Backoff
	Events     Events
	Logger     *zap.Logger
}

// HandshakeError is a refused websocket handshake: the server answered Status, not 101.
type HandshakeError struct {
	Status int
	Body   string
}

func (e *HandshakeError) Error() string {
	return fmt.Sprintf("rancher refused the tunnel: %d %s", e.Status, e.Body)
}

// Client keeps a cluster's sessions open until Stop.
type Client struct {
	cfg    Config
	dialer *websocket.Dialer
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu         sync.Mutex
	registered bool
	conns      map[Kind]*websocket.Conn
}

var writeBuffers sync.Pool // shared by all websockets: idle sessions hold no write buffer

// Start opens the sessions in the background.
func Start(ctx context.Context, cfg Config) *Client {
	if cfg.Throttle == nil {
		cfg.Throttle = NewThrottle(0, 0)
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	ctx, cancel := context.WithCancel(ctx)
	c := &Client{cfg: cfg, cancel: cancel, registered: cfg.Registered, conns: map[Kind]*websocket.Conn{},
		dialer: &websocket.Dialer{Proxy: http.ProxyFromEnvironment, HandshakeTimeout: HandshakeTimeout,
			TLSClientConfig: cfg.TLS, WriteBufferPool: &writeBuffers}}
	kinds := []Kind{Agent}
	if cfg.SteveDial != nil {
		kinds = append(kinds, Steve)
	}
	for _, k := range kinds {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.loop(ctx, k)
		}()
	}
	return c
}

// Stop closes the sessions and waits for their goroutines.
func (c *Client) Stop() {
	c.cancel()
	c.Reconnect() // unblocks sessions being served
	c.wg.Wait()
}

// Reconnect drops the open sessions; they reopen (with fresh parameters) after the backoff.
func (c *Client) Reconnect() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ws := range c.conns {
		_ = ws.Close()
	}
}

func (c *Client) loop(ctx context.Context, kind Kind) {
	attempt := 0
	for ctx.Err() == nil {
		up, err := c.once(ctx, kind)
		if ctx.Err() != nil {
			return
		}
		if up {
			attempt = 0
			if c.cfg.Events.Down != nil {
				c.cfg.Events.Down(kind, err)
			}
		} else {
			if c.cfg.Events.Failed != nil {
				c.cfg.Events.Failed(kind, err)
			}
			attempt++
		}
		delay := c.cfg.Backoff.Delay(attempt)
		c.cfg.Logger.Debug("tunnel reconnect scheduled", zap.String("cluster", c.cfg.Cluster),
			zap.String("session", string(kind)), zap.Duration("delay", delay), zap.Error(err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

// once performs one handshake and serves the session until it ends; up says whether the
// handshake succeeded.
func (c *Client) once(ctx context.Context, kind Kind) (bool, error) {
	url, hdr, err := c.request(kind)
	if err != nil {
		return false, err
	}
	release, err := c.cfg.Throttle.Acquire(ctx)
	if err != nil {
		return false, err
	}
	ws, resp, err := c.dialer.DialContext(ctx, url, hdr)
	release()
	if err != nil {
		return false, handshakeErr(err, resp)
	}
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	c.track(kind, ws)
	defer c.untrack(kind)
	c.up(kind)
	local := newLocalConns()
	sess := remotedialer.NewClientSessionWithDialer(c.allow(kind), ws, local.wrap(c.localDialer(kind)))
	local.sess = sess
	KeepaliveHandlers(ws)
	stop := context.AfterFunc(ctx, func() { _ = ws.Close() })
	_, err = sess.Serve(ctx)
	stop()
	_ = ws.Close() // from here every write to the session fails at once
	// Session.Close only after the session's connections have let go (drain.go).
	if live, clean := local.drain(drainTimeout); !clean {
		c.cfg.Logger.Warn("tunnel connections did not close in time, closing the session anyway", zap.String("cluster", c.cfg.Cluster),
			zap.String("session", string(kind)), zap.Int("connections", live), zap.Duration("waited", drainTimeout))
	}
	sess.Close()
	local.markClosed()
	return true, err
}

// request is the URL and headers of a session's handshake.
func (c *Client) request(kind Kind) (string, http.Header, error) {
	c.mu.Lock()
	registered := c.registered
	c.mu.Unlock()
	url, err := ConnectURL(c.cfg.Server, kind, registered)
	if err != nil {
		return "", nil, err
	}
	hdr := http.Header{}
	if kind == Steve {
		hdr.Set("Authorization", "Bearer "+StevePrefix+c.cfg.Token.Reveal())
		return url, hdr, nil
	}
	p, err := c.cfg.Params()
	if err != nil {
		return "", nil, err
	}
	enc, err := EncodeParams(p)
	if err != nil {
		return "", nil, err
	}
	hdr.Set(TokenHeader, c.cfg.Token.Reveal())
	hdr.Set(ParamsHeader, enc)
	return url, hdr, nil
}

func (c *Client) up(kind Kind) {
	first := false
	c.mu.Lock()
	if kind == Agent && !c.registered {
		c.registered, first = true, true
	}
	c.mu.Unlock()
	if first && c.cfg.Events.Registered != nil {
		c.cfg.Events.Registered()
	}
	if c.cfg.Events.Up != nil {
		c.cfg.Events.Up(kind)
	}
}

func (c *Client) track(kind Kind, ws *websocket.Conn) {
	c.mu.Lock()
	c.conns[kind] = ws
	c.mu.Unlock()
}

func (c *Client) untrack(kind Kind) {
	c.mu.Lock()
	delete(c.conns, kind)
	c.mu.Unlock()
}

// allow is the session's ConnectAuthorizer: only TCP to the cluster's own proxy on the agent
// session; any TCP address on the steve session, which answers every one in memory.
func (c *Client) allow(kind Kind) remotedialer.ConnectAuthorizer {
	return func(proto, address string) bool {
		ok := Allowed(kind, proto, address, c.cfg.ProxyAddr())
		if c.cfg.Events.Dial != nil {
			c.cfg.Events.Dial(kind, ok)
		}
		if !ok {
			c.cfg.Logger.Warn("tunnel connect request refused", zap.String("cluster", c.cfg.Cluster),
				zap.String("session", string(kind)), zap.String("proto", proto), zap.String("address", address))
		}
		return ok
	}
}

// Allowed is the allow rule. The steve session accepts any TCP address: its dialer never
// leaves memory (the steve handler answers them all, as the agent's steve aggregation listener
// does in rancher/steve pkg/aggregation), and Rancher dials more than the steve address there —
// pkg/controllers/management/clusterconnected checks the agent with GET http://not-used/ping,
// and a refusal ends the whole session (remotedialer v0.6.1), so the cluster would never count
// as connected. The agent session, whose dialer reaches the network, accepts only TCP to
// proxyAddr: no unix sockets, no other ports, no other hosts.
func Allowed(kind Kind, proto, address, proxyAddr string) bool {
	if proto != "tcp" {
		return false
	}
	return kind == Steve || (proxyAddr != "" && address == proxyAddr)
}

func (c *Client) localDialer(kind Kind) remotedialer.Dialer {
	if kind == Steve {
		return c.cfg.SteveDial
	}
	if c.cfg.AgentDial != nil {
		return c.cfg.AgentDial
	}
	d := &net.Dialer{Timeout: 10 * time.Second}
	return d.DialContext
}

// handshakeErr turns a failed dial into a *HandshakeError when the server answered.
func handshakeErr(err error, resp *http.Response) error {
	if resp == nil || !errors.Is(err, websocket.ErrBadHandshake) {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return &HandshakeError{Status: resp.StatusCode, Body: strings.TrimSpace(string(body))}
}
