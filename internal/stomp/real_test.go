package stomp

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/testenv/rmqenv"
)

// realSession declares a fresh vhost, user and queue on the real broker. The names carry the
// process id: the tier-2 soak runs two copies of this package at once against one broker, and
// with the test's name alone each copy deleted and re-declared the other's vhost mid-test.
func realSession(t *testing.T, env *rmqenv.Env, b *rmqenv.Broker) Session {
	t.Helper()
	id := strings.ReplaceAll(t.Name(), "/", "_") + "_" + strconv.Itoa(os.Getpid())
	s := Session{VHost: "vh_" + id, Login: "sub_" + id, Passcode: secret.New("tok-" + id), Queue: "subscription_" + id + "_order"}
	if err := b.DeclareQueue(s.VHost, s.Login, s.Passcode.Reveal(), s.Queue); err != nil {
		t.Fatal(err)
	}
	return s
}

func runReal(t *testing.T, o Options) *Listener {
	t.Helper()
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	l, err := NewListener(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = l.Run(ctx, context.Background()) }()
	t.Cleanup(func() { cancel(); <-done })
	return l
}

// silentClientIsDropped logs in with 1 s heart-beats and then sends nothing: RabbitMQ must
// close the link within a few seconds. It is the control for the listener that survives.
func silentClientIsDropped(t *testing.T, env *rmqenv.Env, s Session) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, env.WSURL, &websocket.DialOptions{Subprotocols: []string{subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	connect := "CONNECT\naccept-version:1.2\nhost:" + s.VHost + "\nlogin:" + s.Login + "\npasscode:" + s.Passcode.Reveal() +
		"\nheart-beat:1000,1000\n\n\x00"
	if err := ws.Write(ctx, websocket.MessageText, []byte(connect)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for {
		if _, _, err := ws.Read(ctx); err != nil {
			if ctx.Err() != nil {
				t.Fatal("RabbitMQ kept a silent client for 10 s: the heart-beat check below proves nothing")
			}
			return time.Since(start)
		}
	}
}

func TestRealRabbitMQDeliversThroughAmqQueueAndKeepsAnIdleLinkAlive(t *testing.T) {
	env := rmqenv.Load(t)
	b := env.Broker(t)
	s := realSession(t, env, b)
	got := make(chan string, 10)
	var connects atomic.Int32
	l := runReal(t, Options{URL: env.WSURL, HeartBeat: time.Second,
		Prepare: func(context.Context) (Session, error) { return s, nil },
		Handle:  func(_ context.Context, m Message) { got <- string(m.Body) },
		OnState: func(c bool) {
			if c {
				connects.Add(1)
			}
		}})
	deadline := time.Now().Add(10 * time.Second)
	for !l.Status().Connected && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := b.Publish(s.VHost, s.Queue, []byte(`{"order_uuid":"x"}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if m != `{"order_uuid":"x"}` {
			t.Fatalf("got %q", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no message; status %+v", l.Status())
	}
	// RabbitMQ drops a client that promised 1 s heart-beats and stays silent (control), while
	// the listener, idle for 6 s, keeps its one connection: its heart-beats are really sent.
	dropped := silentClientIsDropped(t, env, s)
	time.Sleep(6*time.Second - dropped)
	if connects.Load() != 1 || !l.Status().Connected {
		t.Fatalf("idle link dropped: %d connects, %+v", connects.Load(), l.Status())
	}
	t.Logf("silent control client dropped after %s; listener alive after 6 s", dropped.Round(time.Millisecond))
}

func TestRealRabbitMQRefusals(t *testing.T) {
	env := rmqenv.Load(t)
	b := env.Broker(t)
	s := realSession(t, env, b)
	bad := s
	bad.Passcode = secret.New("wrong")
	l := runReal(t, Options{URL: env.WSURL, Prepare: func(context.Context) (Session, error) { return bad, nil },
		Handle: func(context.Context, Message) {}, Backoff: Backoff{RefusedMin: 200 * time.Millisecond, RefusedMax: time.Second}})
	time.Sleep(3 * time.Second)
	st := l.Status()
	if st.Connected || !strings.Contains(st.LastError, "Access refused") || st.Failures < 2 || st.Failures > 8 {
		t.Errorf("wrong password: %+v", st)
	}

	var prepares atomic.Int32
	missing := s
	missing.Queue = "subscription_does_not_exist"
	l2 := runReal(t, Options{URL: env.WSURL, Handle: func(context.Context, Message) {},
		Prepare: func(context.Context) (Session, error) { prepares.Add(1); return missing, nil },
		Backoff: Backoff{RefusedMin: 200 * time.Millisecond, RefusedMax: time.Second}})
	// Each attempt connects, subscribes and is closed by the broker: the status reads Connected
	// for that moment (a read at a fixed time caught one, under load), so this waits for a
	// moment between attempts with at least two behind it.
	deadline := time.Now().Add(8 * time.Second)
	for st = l2.Status(); st.Connected || prepares.Load() < 2 || !strings.Contains(st.LastError, "right after subscribing"); st = l2.Status() {
		if time.Now().After(deadline) {
			t.Fatalf("missing queue: %d prepares, %+v", prepares.Load(), st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // and it keeps trying, without a subscription that stays
	if n := prepares.Load(); n < 3 {
		t.Errorf("missing queue: %d prepares after 2 s more, %+v", n, l2.Status())
	}
}
