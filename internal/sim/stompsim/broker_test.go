package stompsim

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// client is a raw WebSocket STOMP client, to see exactly what the broker sends.
type client struct {
	t  *testing.T
	ws *websocket.Conn
}

func dialRaw(t *testing.T, b *Broker, subprotocols ...string) (*client, error) {
	t.Helper()
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/ws", &websocket.DialOptions{Subprotocols: subprotocols})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { ws.CloseNow() })
	return &client{t: t, ws: ws}, nil
}

func (c *client) send(frame string) {
	c.t.Helper()
	if err := c.ws.Write(context.Background(), websocket.MessageText, []byte(frame+"\x00")); err != nil {
		c.t.Fatal(err)
	}
}

// next returns the next non-heart-beat frame, or "" with the error once the connection ends.
func (c *client) next(within time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for {
		_, b, err := c.ws.Read(ctx)
		if err != nil {
			return "", err
		}
		if s := strings.TrimLeft(string(b), "\n"); s != "" {
			return s, nil
		}
	}
}

func login(t *testing.T, b *Broker, hb string) *client {
	t.Helper()
	c, err := dialRaw(t, b, "v12.stomp")
	if err != nil {
		t.Fatal(err)
	}
	c.send("CONNECT\naccept-version:1.2\nhost:vh\nlogin:u\npasscode:p\nheart-beat:" + hb + "\n\n")
	if f, err := c.next(time.Second); err != nil || !strings.HasPrefix(f, "CONNECTED\n") {
		t.Fatalf("connect: %q %v", f, err)
	}
	return c
}

func newBroker(t *testing.T) *Broker {
	b := New(Options{})
	if err := b.DeclareQueue("vh", "u", "p", "q"); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRefusesWhatRabbitMQRefuses(t *testing.T) {
	b := newBroker(t)
	c, err := dialRaw(t, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.next(time.Second); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("no subprotocol: %v", err)
	}
	c = login(t, b, "0,0")
	c.send("SUBSCRIBE\nid:1\ndestination:/queue/q\nack:auto\n\n")
	if f, _ := c.next(time.Second); !strings.HasPrefix(f, "ERROR\n") || !strings.Contains(f, "/amq/queue/") {
		t.Errorf("/queue/ destination: %q", f)
	}
	c = login(t, b, "0,0")
	c.send("SUBSCRIBE\nid:1\ndestination:/amq/queue/missing\nack:auto\n\n")
	if f, err := c.next(time.Second); f != "" || err == nil {
		t.Errorf("missing queue: got %q, want the connection closed without a frame", f)
	}
	bad, _ := dialRaw(t, b, "v12.stomp")
	bad.send("CONNECT\naccept-version:1.2\nhost:vh\nlogin:u\npasscode:wrong\n\n")
	if f, _ := bad.next(time.Second); !strings.Contains(f, "Access refused for user 'u'") {
		t.Errorf("wrong passcode: %q", f)
	}
	if st := b.Stats(); st.Refused != 1 || st.Connects != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestSilentClientIsDroppedAndBeatsAreCounted(t *testing.T) {
	b := newBroker(t)
	c := login(t, b, "100,0")
	if _, err := c.next(5 * time.Second); err == nil {
		t.Fatal("a client that promised heart-beats and sent none was kept")
	}
	c = login(t, b, "100,0")
	for range 5 {
		time.Sleep(60 * time.Millisecond)
		if err := c.ws.Write(context.Background(), websocket.MessageText, []byte("\n")); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(time.Second)
	for b.Stats().HeartBeats < 5 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if st := b.Stats(); st.HeartBeats < 5 || b.Connections() != 1 {
		t.Fatalf("beating client: %+v, %d connections", st, b.Connections())
	}
}

func TestUnacknowledgedMessagesComeBack(t *testing.T) {
	b := newBroker(t)
	for _, m := range []string{"one", "two"} {
		if err := b.Publish("vh", "q", []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	c := login(t, b, "0,0")
	c.send("SUBSCRIBE\nid:s\ndestination:/amq/queue/q\nack:client-individual\nprefetch-count:1\n\n")
	f, _ := c.next(time.Second)
	if !strings.Contains(f, "redelivered:false") || !strings.HasSuffix(strings.TrimRight(f, "\x00"), "one") {
		t.Fatalf("first delivery %q", f)
	}
	if b.Depth("vh", "q") != 1 { // prefetch 1: "two" waits
		t.Fatalf("depth %d", b.Depth("vh", "q"))
	}
	b.DropConnections()
	c = login(t, b, "0,0")
	c.send("SUBSCRIBE\nid:s\ndestination:/amq/queue/q\nack:client-individual\n\n")
	f, _ = c.next(time.Second)
	if !strings.Contains(f, "redelivered:true") || !strings.Contains(f, "one") {
		t.Fatalf("after the drop: %q", f)
	}
	c.send("ACK\nid:m-1\n\n")
	if f, _ := c.next(time.Second); !strings.Contains(f, "two") {
		t.Fatalf("second message %q", f)
	}
	c.send("ACK\nid:m-999\n\n")
	if f, _ := c.next(time.Second); !strings.HasPrefix(f, "ERROR\n") {
		t.Fatalf("unknown ack id: %q", f)
	}
}
