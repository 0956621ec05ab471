package ranchersim

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
	"github.com/rancher/remotedialer"
)

// The tunnel server's sessions. Rancher serves /v3/connect with remotedialer's Server; the
// simulator upgrades the connection itself and runs each session as a remotedialer Session it
// holds (Session.Dial, Session.Serve — the same message handling), because remotedialer
// v0.6.1's ping and pong handlers, which Server installs where nobody can reach them, set the
// websocket's write deadline from the reading goroutine while other goroutines write: a data
// race under -race (gorilla/websocket allows one writer; still so in remotedialer's main
// branch). Holding the websocket, the simulator installs handlers that answer pings and extend
// the read deadline without touching the write deadline. Like Server it keeps several sessions
// per client key (the newest serves dials), refuses every connect request from the agent (no
// ClientConnectAuthorizer), answers a failed authorization 400 with the error and an unknown
// client 401 "failed authentication" (DefaultErrorWriter), and closes a session's connections
// when it ends, under the lock its HasSession takes. One difference: a session it holds also
// pings the agent every PingWriteInterval (a client session's Serve does), which Rancher's does
// not; the agent answers with pongs.

type tunnelSession struct {
	key  string
	sess *remotedialer.Session
}

// serveSession upgrades the request and serves the session until it ends.
func (t *tunnels) serveSession(w http.ResponseWriter, r *http.Request, key string) {
	up := websocket.Upgrader{HandshakeTimeout: 5 * time.Second, CheckOrigin: func(*http.Request) bool { return true },
		Error: func(w http.ResponseWriter, r *http.Request, status int, reason error) {
			remotedialer.DefaultErrorWriter(w, r, http.StatusBadRequest, reason)
		}}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	sess := remotedialer.NewClientSession(func(string, string) bool { return false }, ws)
	keepalive(ws)
	ts := &tunnelSession{key: key, sess: sess}
	t.closing.Lock()
	t.sessions[key] = append(t.sessions[key], ts)
	t.closing.Unlock()
	defer t.removeSession(ts)
	_, _ = sess.Serve(r.Context())
	_ = ws.Close()
}

// removeSession forgets a session and closes its connections, holding the lock alive takes.
func (t *tunnels) removeSession(ts *tunnelSession) {
	t.closing.Lock()
	defer t.closing.Unlock()
	list := t.sessions[ts.key]
	for i, s := range list {
		if s == ts {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(t.sessions, ts.key)
	} else {
		t.sessions[ts.key] = list
	}
	ts.sess.Close()
}

// HasSession reports whether a session with the client key is up.
func (t *tunnels) HasSession(key string) bool {
	t.closing.RLock()
	defer t.closing.RUnlock()
	return len(t.sessions[key]) > 0
}

func (t *tunnels) alive(ts *tunnelSession) bool {
	t.closing.RLock()
	defer t.closing.RUnlock()
	for _, s := range t.sessions[ts.key] {
		if s == ts {
			return true
		}
	}
	return false
}

// dialer dials through the newest session of client key; the connections it returns refuse to
// write once that session is gone. remotedialer v0.6.1 reads a connection's error field unlocked
// in Write while closing the session writes it (rancher/remotedialer#261): checking alive first,
// under the lock the close holds, orders the simulator's writes after such a close.
func (t *tunnels) dialer(key string) remotedialer.Dialer {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		t.closing.RLock()
		list := t.sessions[key]
		var ts *tunnelSession
		if len(list) > 0 {
			ts = list[len(list)-1]
		}
		t.closing.RUnlock()
		if ts == nil {
			return nil, errors.New("failed to find Session for client " + key)
		}
		c, err := ts.sess.Dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		return &sessionConn{Conn: c, alive: func() bool { return t.alive(ts) }, sess: ts.sess}, nil
	}
}

type sessionConn struct {
	net.Conn
	alive func() bool
	sess  *remotedialer.Session
}

// Write is ordered with whatever closes the connection: a closed session (alive) or a
// SyncConnections from the agent that finds the connection stale — remotedialer closes those
// holding the Session's lock, so the write holds it for reading. (The agent's list can miss a
// connection dialled a moment before, which remotedialer then closes: the request fails, as it
// would against Rancher.) A write that waits for the agent to resume a paused connection while
// a dial or a close waits for the lock would stall the session; the simulator's requests are far
// below the 2 MiB that pause one.
func (c *sessionConn) Write(b []byte) (int, error) {
	if !c.alive() {
		return 0, io.ErrClosedPipe
	}
	c.sess.RLock()
	defer c.sess.RUnlock()
	return c.Conn.Write(b)
}

// keepalive answers pings and extends the read deadline on pings and pongs, leaving the write
// deadline alone (see above).
func keepalive(ws *websocket.Conn) {
	ws.SetPingHandler(func(data string) error {
		if err := ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(remotedialer.PingWaitDuration)); err != nil {
			return err
		}
		return ws.SetReadDeadline(time.Now().Add(remotedialer.PingWaitDuration))
	})
	ws.SetPongHandler(func(string) error { return ws.SetReadDeadline(time.Now().Add(remotedialer.PingWaitDuration)) })
}
