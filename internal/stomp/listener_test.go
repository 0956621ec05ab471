package stomp

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/stompsim"
)

const (
	vhost = "b2c0ffee000000000000000000000001"
	login = "5ab5c41b000000000000000000000001"
	pass  = "tok-3141"
	queue = "subscription_5ab5c41b_offering_e2ef_order"
)

// rig is a broker on loopback and a listener pointed at it.
type rig struct {
	t        *testing.T
	broker   *stompsim.Broker
	url      string
	prepares atomic.Int32
	got      chan Message
	logs     *observer.ObservedLogs
	l        *Listener
	stop     context.CancelFunc
	done     chan struct{}
}

func newRig(t *testing.T, tune func(*Options)) *rig {
	t.Helper()
	b := stompsim.New(stompsim.Options{})
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	core, logs := observer.New(zap.DebugLevel)
	r := &rig{t: t, broker: b, url: "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws", got: make(chan Message, 100), logs: logs}
	// Heart-beats every second: the broker drops a client silent for two periods, and a shorter
	// period made a loaded machine's scheduling gaps drop connections the tests did not expect.
	o := Options{URL: r.url, Name: "order", Logger: zap.New(core), HeartBeat: time.Second,
		Prepare: func(ctx context.Context) (Session, error) {
			r.prepares.Add(1)
			if err := b.DeclareQueue(vhost, login, pass, queue); err != nil {
				return Session{}, err
			}
			return Session{VHost: vhost, Login: login, Passcode: secret.New(pass), Queue: queue}, nil
		},
		Handle:  func(ctx context.Context, m Message) { r.got <- m },
		Backoff: Backoff{RefusedMin: 100 * time.Millisecond, RefusedMax: 400 * time.Millisecond}}
	if tune != nil {
		tune(&o)
	}
	l, err := NewListener(o)
	if err != nil {
		t.Fatal(err)
	}
	r.l = l
	return r
}

func (r *rig) start() {
	ctx, cancel := context.WithCancel(context.Background())
	r.stop, r.done = cancel, make(chan struct{})
	go func() { defer close(r.done); _ = r.l.Run(ctx, context.Background()) }()
	r.t.Cleanup(func() { cancel(); <-r.done })
}

func (r *rig) waitConnected(within time.Duration) time.Duration {
	r.t.Helper()
	start := time.Now()
	for !r.l.Status().Connected || r.broker.Connections() == 0 {
		if time.Since(start) > within {
			r.t.Fatalf("not connected within %s: %+v", within, r.l.Status())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

func (r *rig) publish(body string) {
	r.t.Helper()
	if err := r.broker.Publish(vhost, queue, []byte(body)); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) receive(want string) {
	r.t.Helper()
	select {
	case m := <-r.got:
		if string(m.Body) != want {
			r.t.Fatalf("got %q, want %q", m.Body, want)
		}
	case <-time.After(3 * time.Second):
		r.t.Fatalf("no message %q", want)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestReceivesAcknowledgesAndSendsHeartBeats(t *testing.T) {
	r := newRig(t, nil)
	r.start()
	r.waitConnected(2 * time.Second)
	r.publish(`{"order_uuid":"a"}`)
	r.receive(`{"order_uuid":"a"}`)
	waitFor(t, "the ack", func() bool { return r.broker.Stats().Acked == 1 })
	// The broker drops a client that promised 1 s heart-beats and is silent for 2 s: staying
	// connected for 3 s while idle proves they are sent.
	before := r.broker.Stats().HeartBeats
	time.Sleep(3 * time.Second)
	st := r.broker.Stats()
	if st.Connects != 1 || r.broker.Connections() != 1 {
		t.Fatalf("idle connection was dropped: %+v", st)
	}
	if st.HeartBeats-before < 2 {
		t.Fatalf("only %d heart-beats in 3 s", st.HeartBeats-before)
	}
	if r.prepares.Load() != 1 {
		t.Errorf("prepared %d times", r.prepares.Load())
	}
}

func TestReconnectsAfterCrashAndRedelivers(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	r := newRig(t, func(o *Options) {
		o.Handle = func(ctx context.Context, m Message) {
			if calls.Add(1) == 1 {
				<-release // the first delivery is still being handled when the connection dies
			}
			o := m
			_ = o
		}
	})
	r.start()
	r.waitConnected(2 * time.Second)
	r.publish("one")
	waitFor(t, "the first delivery", func() bool { return calls.Load() == 1 })
	r.broker.DropConnections()
	took := r.waitConnected(10 * time.Second)
	close(release)
	waitFor(t, "the redelivery", func() bool { return calls.Load() == 2 })
	if st := r.broker.Stats(); st.Redelivered != 1 || st.Connects != 2 {
		t.Fatalf("stats %+v", st)
	}
	t.Logf("reconnected %s after the drop", took) // measured by BenchmarkEventLatency, not asserted
	if r.prepares.Load() != 1 {
		t.Errorf("a network failure re-registered the subscription (%d prepares)", r.prepares.Load())
	}
}

func TestBrokerDownBacksOffThenRecovers(t *testing.T) {
	r := newRig(t, nil)
	var states []bool
	var mu sync.Mutex
	r.l.o.OnState = func(c bool) { mu.Lock(); states = append(states, c); mu.Unlock() }
	r.start()
	r.waitConnected(2 * time.Second)
	r.broker.SetDown(true)
	waitFor(t, "disconnected status", func() bool { return !r.l.Status().Connected })
	h0 := r.broker.Stats().Handshakes
	time.Sleep(3 * time.Second)
	tries := r.broker.Stats().Handshakes - h0
	// 100 ms doubling to a 1 s cap, half random: about 6 attempts in 3 s, never a busy loop.
	if tries < 2 || tries > 12 {
		t.Errorf("%d connection attempts in 3 s while down", tries)
	}
	if st := r.l.Status(); st.Failures < 2 || !strings.Contains(st.LastError, "503") {
		t.Errorf("status %+v", st)
	}
	r.broker.SetDown(false)
	t.Logf("back %s after the broker", r.waitConnected(10*time.Second))
	r.publish("after")
	r.receive("after")
	mu.Lock()
	defer mu.Unlock()
	if len(states) != 3 || !states[0] || states[1] || !states[2] {
		t.Errorf("state changes %v", states)
	}
}

func TestRefusedCredentialsAreReportedAndRetriedSlowly(t *testing.T) {
	r := newRig(t, func(o *Options) {
		o.Prepare = func(ctx context.Context) (Session, error) {
			return Session{VHost: vhost, Login: login, Passcode: secret.New("wrong"), Queue: queue}, nil
		}
	})
	if err := r.broker.DeclareQueue(vhost, login, pass, queue); err != nil {
		t.Fatal(err)
	}
	r.start()
	time.Sleep(2 * time.Second)
	st := r.broker.Stats()
	// RefusedMin 100 ms doubling to 400 ms, half random: at most about 8 tries in 2 s.
	if st.Refused < 2 || st.Refused > 10 || st.Connects != 0 {
		t.Errorf("stats %+v", st)
	}
	if s := r.l.Status(); s.Connected || !strings.Contains(s.LastError, "Access refused for user") {
		t.Errorf("status %+v", s)
	}
	errs := r.logs.FilterMessage("event broker refused the subscription; registering it again and retrying").All()
	if len(errs) < 2 || errs[0].Level != zap.ErrorLevel {
		t.Errorf("%d refusal log lines", len(errs))
	}
	for _, e := range r.logs.All() {
		if strings.Contains(e.Message+e.ContextMap()["error"].(string), "wrong") {
			t.Errorf("log line shows the passcode: %v", e)
		}
	}
}

func TestMissingQueueIsRegisteredAgain(t *testing.T) {
	r := newRig(t, nil)
	r.start()
	r.waitConnected(2 * time.Second)
	r.broker.DeleteQueue(vhost, queue) // like a Waldur clean-up
	waitFor(t, "a second Prepare", func() bool { return r.prepares.Load() >= 2 })
	r.waitConnected(3 * time.Second)
	r.publish("back")
	r.receive("back")
}

func TestMalformedFrameDropsOnlyTheConnection(t *testing.T) {
	r := newRig(t, nil)
	r.start()
	r.waitConnected(2 * time.Second)
	time.Sleep(refusalWindow) // a long-lived connection: its loss is a network failure
	if n := r.broker.InjectRaw(vhost, queue, []byte("MESSAGE\nbroken header line\n\n\x00")); n != 1 {
		t.Fatalf("injected into %d sessions", n)
	}
	waitFor(t, "a reconnect", func() bool { return r.broker.Stats().Connects == 2 && r.l.Status().Connected })
	r.publish("next")
	r.receive("next")
}

func TestStopFinishesWorkInFlight(t *testing.T) {
	started := make(chan struct{})
	var finished atomic.Bool
	r := newRig(t, func(o *Options) {
		o.Handle = func(ctx context.Context, m Message) {
			close(started)
			time.Sleep(300 * time.Millisecond)
			finished.Store(ctx.Err() == nil)
		}
	})
	r.start()
	r.waitConnected(2 * time.Second)
	r.publish("slow")
	<-started
	r.stop()
	<-r.done
	if !finished.Load() {
		t.Fatal("handler was cut short")
	}
	if st := r.broker.Stats(); st.Acked != 1 {
		t.Fatalf("in-flight message not acknowledged before disconnecting: %+v", st)
	}
}
