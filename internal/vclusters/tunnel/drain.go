package tunnel

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rancher/remotedialer"
)

// remotedialer v0.6.1 reads and writes a tunnelled connection's error field without a lock
// (connection.go: doTunnelClose and Write; fixed upstream by rancher/remotedialer#261 in
// v0.6.2, which needs Go 1.27). On the client side the field is written by whichever closes
// the connection first: the pipe between the tunnel and the local connection (clientDial,
// pipe: either direction), the session when Rancher sends an Error frame, a failed dial
// (clientDial's tunnelClose), or Session.Close, which closes every open connection at once
// after the websocket ended. Whoever then reads or writes it without having synchronized with
// that first closer races. The paths this package controls are kept out of that use:
//
//   - Session.Close never meets a live connection: when a session ends, every local
//     connection it dialed stops reading (its Read returns io.EOF), so the pipe's own reading
//     direction closes the tunnelled connection and then the local one; Session.Close runs
//     only after each local connection has been closed that way (it then finds the error
//     field set and leaves it alone), or after drainTimeout;
//   - a dial never fails inside remotedialer: a failed dial returns a connection whose Read
//     returns the dial's error, so the same reading direction closes it (and Rancher gets the
//     same Error frame);
//   - a local connection's Write never fails: what cannot be delivered is dropped, so only the
//     reading direction ever closes a pipe first (two directions closing at once would race);
//   - dials that arrive while a session drains wait until Session.Close is done and then fail
//     (with the reading-direction connection above).
//
//   - a connection the peer's SyncConnections finds stale is closed under the Session's lock:
//     a local Read takes and releases it before the pipe writes what it read.
//
// What stays is Rancher closing a connection while its local side still sends: rare (Rancher
// closes idle connections) and out of this package's hands.

// drainTimeout bounds the wait for a session's connections before Session.Close.
const drainTimeout = 5 * time.Second

type drainState int

const (
	open drainState = iota
	draining
	closed
)

// localConns tracks the local connections of one session.
type localConns struct {
	sess  *remotedialer.Session // set before Serve (see localConn.Read)
	mu    sync.Mutex
	cond  *sync.Cond
	state drainState
	dials int // dials in flight
	conns map[*localConn]struct{}
}

func newLocalConns() *localConns {
	l := &localConns{conns: map[*localConn]struct{}{}}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// wrap returns d with every connection tracked, failures turned into failing reads and
// dials held while the session drains.
func (l *localConns) wrap(d remotedialer.Dialer) remotedialer.Dialer {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		l.mu.Lock()
		for l.state == draining {
			l.cond.Wait()
		}
		if l.state == closed {
			l.mu.Unlock()
			return &localConn{dialErr: net.ErrClosed, released: make(chan struct{})}, nil
		}
		l.dials++
		l.mu.Unlock()
		conn, err := d(ctx, network, address)
		lc := &localConn{Conn: conn, dialErr: err, released: make(chan struct{}), owner: l}
		if err != nil {
			lc.Conn = nil
		}
		l.mu.Lock()
		l.dials--
		l.conns[lc] = struct{}{}
		l.cond.Broadcast()
		l.mu.Unlock()
		return lc, nil
	}
}

// drain makes every local connection stop reading and waits until the pipes have closed
// them; it returns how many there were and false when timeout passed first.
func (l *localConns) drain(timeout time.Duration) (live int, clean bool) {
	deadline := time.Now().Add(timeout)
	wake := time.AfterFunc(timeout, func() { l.mu.Lock(); l.cond.Broadcast(); l.mu.Unlock() })
	defer wake.Stop()
	l.mu.Lock()
	l.state = draining
	for l.dials > 0 && time.Now().Before(deadline) {
		l.cond.Wait()
	}
	conns := make([]*localConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	clean = l.dials == 0
	l.mu.Unlock()
	for _, c := range conns {
		c.stopReading()
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for _, c := range conns {
		select {
		case <-c.released:
		case <-timer.C:
			return len(conns), false
		}
	}
	return len(conns), clean
}

// markClosed marks the session closed (after Session.Close): held and later dials fail.
func (l *localConns) markClosed() {
	l.mu.Lock()
	l.state = closed
	l.cond.Broadcast()
	l.mu.Unlock()
}

func (l *localConns) forget(c *localConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// localConn is a local connection as remotedialer's pipe sees it.
type localConn struct {
	net.Conn // nil when the dial failed
	dialErr  error
	owner    *localConns
	stopped  atomic.Bool
	once     sync.Once
	released chan struct{} // closed by the pipe's first Close
}

func (c *localConn) Read(b []byte) (int, error) {
	if c.dialErr != nil {
		return 0, c.dialErr
	}
	if c.stopped.Load() {
		return 0, io.EOF
	}
	n, err := c.Conn.Read(b)
	if err != nil && c.stopped.Load() {
		return n, io.EOF
	}
	if n > 0 && c.owner != nil && c.owner.sess != nil {
		// The pipe writes what was read to the tunnelled connection next; remotedialer closes
		// connections the peer's SyncConnections no longer lists holding the Session's lock, so
		// taking and releasing it orders that write after such a close.
		c.owner.sess.RLock()
		c.owner.sess.RUnlock() //nolint:staticcheck // an empty critical section on purpose: a barrier
	}
	return n, err
}

// Write delivers b, or drops it when the local side is gone (see the package comment above).
func (c *localConn) Write(b []byte) (int, error) {
	if c.Conn != nil {
		_, _ = c.Conn.Write(b)
	}
	return len(b), nil
}

// stopReading makes a blocked and every later Read return io.EOF.
func (c *localConn) stopReading() {
	c.stopped.Store(true)
	if c.Conn != nil {
		_ = c.Conn.SetReadDeadline(time.Unix(1, 0))
	}
}

func (c *localConn) Close() error {
	var err error
	c.once.Do(func() {
		if c.Conn != nil {
			err = c.Conn.Close()
		}
		if c.owner != nil {
			c.owner.forget(c)
		}
		close(c.released)
	})
	return err
}

func (c *localConn) LocalAddr() net.Addr {
	if c.Conn == nil {
		return pipeAddr{}
	}
	return c.Conn.LocalAddr()
}

func (c *localConn) RemoteAddr() net.Addr {
	if c.Conn == nil {
		return pipeAddr{}
	}
	return c.Conn.RemoteAddr()
}

func (c *localConn) SetDeadline(t time.Time) error {
	if c.Conn == nil {
		return nil
	}
	return c.Conn.SetDeadline(t)
}

func (c *localConn) SetReadDeadline(t time.Time) error {
	if c.Conn == nil {
		return nil
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *localConn) SetWriteDeadline(t time.Time) error {
	if c.Conn == nil {
		return nil
	}
	return c.Conn.SetWriteDeadline(t)
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "unconnected" }
