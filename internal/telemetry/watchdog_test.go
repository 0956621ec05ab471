package telemetry

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// notifySocket is what systemd listens on: a unixgram socket named by $NOTIFY_SOCKET.
func notifySocket(t *testing.T) *net.UnixConn {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	return conn
}

// received returns the datagrams that arrive within d.
func received(t *testing.T, conn *net.UnixConn, d time.Duration) []string {
	t.Helper()
	var got []string
	deadline := time.Now().Add(d)
	buf := make([]byte, 256)
	for {
		_ = conn.SetReadDeadline(deadline)
		n, err := conn.Read(buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return got
			}
			t.Fatal(err)
		}
		got = append(got, string(buf[:n]))
	}
}

func TestWatchdogIsFedOnlyWhileLive(t *testing.T) {
	conn := notifySocket(t)
	t.Setenv("WATCHDOG_USEC", "100000") // 100 ms: a feed every 50 ms
	t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
	var wedged atomic.Bool
	live := func() error {
		if wedged.Load() {
			return errors.New("no heartbeat for 1m30s (interval 30s)")
		}
		return nil
	}
	core, logs := observer.New(zapcore.InfoLevel)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	FeedWatchdog(ctx, live, zap.New(core))

	got := received(t, conn, 400*time.Millisecond)
	if len(got) < 4 {
		t.Fatalf("healthy: %d feeds in 400 ms at a 50 ms period: %q", len(got), got)
	}
	for _, m := range got {
		if m != "WATCHDOG=1" {
			t.Fatalf("unexpected notification %q", m)
		}
	}

	wedged.Store(true)
	received(t, conn, 60*time.Millisecond) // a feed decided before the switch may still arrive
	if got := received(t, conn, 300*time.Millisecond); len(got) != 0 {
		t.Fatalf("not live, yet fed the watchdog: %q", got)
	}
	if n := logs.FilterMessageSnippet("no longer feeding").Len(); n != 1 {
		t.Fatalf("want one log line when feeding stops, got %d: %v", n, logs.All())
	}

	wedged.Store(false)
	if got := received(t, conn, 200*time.Millisecond); len(got) == 0 {
		t.Fatal("live again, but the watchdog is not fed")
	}

	cancel()
	received(t, conn, 60*time.Millisecond)
	if got := received(t, conn, 200*time.Millisecond); len(got) != 0 {
		t.Fatalf("fed after the context ended: %q", got)
	}
}

func TestWatchdogOffOrNotOurs(t *testing.T) {
	cases := []struct{ name, usec, pid string }{
		{"no WATCHDOG_USEC", "", ""},
		{"another process's watchdog", "100000", strconv.Itoa(os.Getpid() + 1)},
		{"not a number", "soon", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn := notifySocket(t)
			t.Setenv("WATCHDOG_USEC", c.usec)
			t.Setenv("WATCHDOG_PID", c.pid)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			FeedWatchdog(ctx, func() error { return nil }, zap.NewNop())
			if got := received(t, conn, 200*time.Millisecond); len(got) != 0 {
				t.Fatalf("fed a watchdog that is not ours: %q", got)
			}
		})
	}
}
