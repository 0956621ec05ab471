package tunnel_test

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/rancher/remotedialer"

	"github.com/waldur/site-agent/internal/vclusters/tunnel"
)

// streamThrough starts the client with a proxy at target that streams without end (as a watch
// that keeps sending events), reading what Rancher sends when readToo, and opens a connection to
// it through the agent session. It returns the connection, a channel closed once the local end
// of the stream is closed, and the stop function of the client.
func (w *world) streamThrough(t *testing.T, target string, readToo bool) (net.Conn, <-chan struct{}, func()) {
	t.Helper()
	streamClosed := make(chan struct{})
	cfg := w.config(nil)
	cfg.ProxyAddr = func() string { return target }
	cfg.AgentDial = func(ctx context.Context, _, _ string) (net.Conn, error) {
		client, server := net.Pipe()
		if readToo {
			go func() { _, _ = io.Copy(io.Discard, server) }()
		}
		go func() {
			defer close(streamClosed)
			chunk := make([]byte, 1024)
			for {
				if _, err := server.Write(chunk); err != nil {
					_ = server.Close()
					return
				}
			}
		}()
		return client, nil
	}
	c := tunnel.Start(context.Background(), cfg)
	w.waitSessions(true, false)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := w.sim.DialTunnel(ctx, w.id, false, target)
	if err != nil {
		c.Stop()
		t.Fatal(err)
	}
	return conn, streamClosed, c.Stop
}

// drain reads conn to its end in the background and sends how many bytes came.
func drain(conn net.Conn) <-chan int64 {
	n := make(chan int64, 1)
	go func() {
		read, _ := io.Copy(io.Discard, conn)
		n <- read
	}()
	return n
}

// remotedialer v0.6.1's Session.Close closes every open connection without synchronizing with
// their pipes (rancher/remotedialer#261): a connection that streams while its session ends is
// a data race under -race. The client drains first: the local connection stops reading, the
// pipe closes it, and only then does the session close. A stream that keeps writing while
// Rancher restarts shows it: the race detector stays quiet, the stream's local end is closed,
// and the session comes back.
func TestSessionEndsOnlyAfterItsConnectionsLetGo(t *testing.T) {
	w := newWorld(t)
	conn, streamClosed, stop := w.streamThrough(t, "127.0.0.1:7443", false)
	defer stop()
	defer conn.Close()
	streamed := drain(conn)
	time.Sleep(100 * time.Millisecond) // mid-stream
	w.kill()
	select {
	case <-streamClosed:
	case <-time.After(10 * time.Second):
		t.Fatal("the local end of the stream was never closed")
	}
	if n := <-streamed; n == 0 {
		t.Error("nothing streamed through the tunnel before the restart")
	}
	w.restart()
	w.waitSessions(true, false)
	if n := w.events.get(func(r *recorder) int { return r.down[tunnel.Agent] }); n != 1 {
		t.Errorf("agent session went down %d times, want 1", n)
	}
}

// remotedialer v0.6.1's own ping and pong handlers set the websocket's write deadline from the
// reading goroutine while others write (a data race under -race); the client's replacements
// (KeepaliveHandlers) do not. Data streaming both ways past the first pings (every
// remotedialer.PingWriteInterval, 5 s, both ways here) shows it: the race detector stays quiet.
func TestPingsDoNotRaceWithWrites(t *testing.T) {
	w := newWorld(t)
	conn, _, stop := w.streamThrough(t, "127.0.0.1:7444", true)
	defer stop()
	received := drain(conn)
	chunk := make([]byte, 1024)
	for until := time.Now().Add(remotedialer.PingWriteInterval + 500*time.Millisecond); time.Now().Before(until); {
		if _, err := conn.Write(chunk); err != nil {
			t.Fatalf("write through the tunnel: %v", err)
		}
	}
	_ = conn.Close()
	if n := <-received; n == 0 {
		t.Error("nothing came through the tunnel")
	}
}
