package stompsim

import (
	"context"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/go-stomp/stomp/v3/frame"
)

type subscription struct {
	sess     *session
	id       string
	q        *queue
	ack      string // auto, client, client-individual
	prefetch int
	unacked  map[string]message
}

// session is one client connection.
type session struct {
	b      *Broker
	nc     net.Conn
	wmu    sync.Mutex
	w      *frame.Writer
	closed chan struct{}
	once   sync.Once
	gone   chan struct{} // closed when cleanup has requeued what the session held

	// guarded by b.mu
	loggedIn bool
	vhost    string
	subs     map[string]*subscription
}

// ServeHTTP is the Web-STOMP endpoint: a WebSocket with subprotocol v12.stomp.
func (b *Broker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.stats.Handshakes++
	down := b.down
	b.mu.Unlock()
	if down {
		http.Error(w, "broker unavailable", http.StatusServiceUnavailable)
		return
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"v12.stomp", "v11.stomp", "v10.stomp"}})
	if err != nil {
		return
	}
	if ws.Subprotocol() == "" {
		_ = ws.Close(websocket.StatusPolicyViolation, "a STOMP subprotocol (v12.stomp) is required")
		return
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	nc := websocket.NetConn(ctx, ws, websocket.MessageText)
	s := &session{b: b, nc: nc, w: frame.NewWriter(nc), closed: make(chan struct{}), gone: make(chan struct{}), subs: map[string]*subscription{}}
	b.mu.Lock()
	b.sessions[s] = true
	b.mu.Unlock()
	s.serve()
}

func (s *session) serve() {
	defer s.cleanup()
	r := frame.NewReader(s.nc)
	_ = s.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	f, err := r.Read()
	if err != nil || f == nil || (f.Command != frame.CONNECT && f.Command != frame.STOMP) {
		s.fail("expected CONNECT", "the first frame must be CONNECT")
		return
	}
	recvEvery, ok := s.connect(f)
	if !ok {
		return
	}
	_ = s.nc.SetReadDeadline(time.Time{})
	for {
		if recvEvery > 0 {
			// RabbitMQ drops a client that promised heart-beats and stays silent for two periods.
			_ = s.nc.SetReadDeadline(time.Now().Add(2 * recvEvery))
		}
		f, err := r.Read()
		if err != nil {
			s.b.logf("connection ended: %v", err)
			return
		}
		if f == nil {
			s.b.mu.Lock()
			s.b.stats.HeartBeats++
			s.b.mu.Unlock()
			continue
		}
		if !s.handle(f) {
			return
		}
	}
}

// connect checks the login and answers CONNECTED, starting the broker's heart-beats. It returns
// how often the client promised to send heart-beats.
func (s *session) connect(f *frame.Frame) (time.Duration, bool) {
	if !strings.Contains(","+f.Header.Get(frame.AcceptVersion)+",", ",1.2,") {
		s.fail("Version mismatch", "Supported versions are 1.2")
		return 0, false
	}
	login, pass, vhost := f.Header.Get(frame.Login), f.Header.Get(frame.Passcode), f.Header.Get(frame.Host)
	b := s.b
	b.mu.Lock()
	u, known := b.users[login]
	ok := known && u.password == pass && u.vhost == vhost
	if ok {
		s.loggedIn, s.vhost = true, vhost
		b.stats.Connects++
	} else {
		b.stats.Refused++
	}
	b.mu.Unlock()
	if !ok {
		s.fail("Bad CONNECT", "Access refused for user '"+login+"'")
		return 0, false
	}
	cx, cy, err := frame.ParseHeartBeat(f.Header.Get(frame.HeartBeat))
	if err != nil {
		cx, cy = 0, 0
	}
	if m := b.opts.MaxHeartBeat; m > 0 {
		cx, cy = min(cx, m), min(cy, m)
	}
	// The broker sends every cy (what the client wants to receive) and expects every cx.
	hb := strconv.FormatInt(cy.Milliseconds(), 10) + "," + strconv.FormatInt(cx.Milliseconds(), 10)
	if !s.write(frame.New(frame.CONNECTED, frame.Version, "1.2", frame.HeartBeat, hb,
		frame.Server, "stompsim/1.0", frame.Session, "session-"+login)) {
		return 0, false
	}
	if cy > 0 {
		go s.beat(cy)
	}
	b.logf("connected user %s vhost %s heart-beat %s", login, vhost, hb)
	return cx, true
}

func (s *session) beat(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.closed:
			return
		case <-t.C:
			s.wmu.Lock()
			err := s.w.Write(nil)
			s.wmu.Unlock()
			if err != nil {
				return
			}
		}
	}
}

// handle applies one frame; false ends the connection.
func (s *session) handle(f *frame.Frame) bool {
	switch f.Command {
	case frame.SUBSCRIBE:
		return s.subscribe(f)
	case frame.ACK, frame.NACK:
		return s.ack(f)
	case frame.UNSUBSCRIBE:
		s.b.mu.Lock()
		sub := s.subs[f.Header.Get(frame.Id)]
		s.dropSub(sub)
		s.b.mu.Unlock()
		return s.receipt(f)
	case frame.DISCONNECT:
		s.receipt(f)
		return false
	}
	s.fail("Unsupported frame", "stompsim does not model "+f.Command)
	return false
}

func (s *session) subscribe(f *frame.Frame) bool {
	id, dest := f.Header.Get(frame.Id), f.Header.Get(frame.Destination)
	ack := f.Header.Get(frame.Ack)
	if ack == "" {
		ack = "auto"
	}
	name, isAmq := strings.CutPrefix(dest, "/amq/queue/")
	if id == "" || !isAmq || (ack != "auto" && ack != "client" && ack != "client-individual") {
		s.fail("Bad SUBSCRIBE", "need an id, a /amq/queue/ destination and a known ack mode, got "+dest)
		return false
	}
	prefetch, _ := strconv.Atoi(f.Header.Get("prefetch-count"))
	b := s.b
	b.mu.Lock()
	q, ok := b.queues[qkey(s.vhost, name)]
	if !ok || s.subs[id] != nil {
		b.mu.Unlock()
		b.logf("subscribe to missing queue %q: closing like RabbitMQ (no ERROR frame)", name)
		return false
	}
	sub := &subscription{sess: s, id: id, q: q, ack: ack, prefetch: prefetch, unacked: map[string]message{}}
	s.subs[id] = sub
	q.subs = append(q.subs, sub)
	out := b.dispatch(q)
	b.mu.Unlock()
	out.send()
	return s.receipt(f)
}

func (s *session) ack(f *frame.Frame) bool {
	id := f.Header.Get(frame.Id)
	b := s.b
	b.mu.Lock()
	var owner *subscription
	for _, sub := range s.subs {
		if _, ok := sub.unacked[id]; ok {
			owner = sub
		}
	}
	if owner == nil {
		b.mu.Unlock()
		s.fail("Bad ACK", "unknown message id "+id)
		return false
	}
	m := owner.unacked[id]
	delete(owner.unacked, id)
	if f.Command == frame.NACK {
		m.redelivered = true
		owner.q.ready = append([]message{m}, owner.q.ready...)
	} else {
		b.stats.Acked++
	}
	out := b.dispatch(owner.q)
	b.mu.Unlock()
	out.send()
	return s.receipt(f)
}

func (s *session) deliver(sub *subscription, m message) {
	f := frame.New(frame.MESSAGE, frame.Subscription, sub.id, frame.Destination, "/queue/"+sub.q.name,
		frame.MessageId, m.id, "redelivered", strconv.FormatBool(m.redelivered))
	if sub.ack != "auto" {
		f.Header.Set(frame.Ack, m.id)
	}
	f.Body = m.body
	s.write(f)
}

func (s *session) receipt(f *frame.Frame) bool {
	if r, ok := f.Header.Contains(frame.Receipt); ok {
		return s.write(frame.New(frame.RECEIPT, frame.ReceiptId, r))
	}
	return true
}

func (s *session) write(f *frame.Frame) bool {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.w.Write(f) == nil
}

func (s *session) writeRaw(raw []byte) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, _ = s.nc.Write(raw)
}

// fail sends an ERROR frame and ends the connection.
func (s *session) fail(msg, detail string) {
	f := frame.New(frame.ERROR, frame.Message, msg, frame.ContentType, "text/plain")
	f.Body = []byte(detail)
	s.write(f)
	s.b.logf("error %s: %s", msg, detail)
}

func (s *session) kill() {
	s.once.Do(func() { close(s.closed) })
	_ = s.nc.Close()
}

// dropSub removes a subscription and gives its unacknowledged messages back. Caller holds b.mu.
func (s *session) dropSub(sub *subscription) {
	if sub == nil {
		return
	}
	delete(s.subs, sub.id)
	q := sub.q
	for i, x := range q.subs {
		if x == sub {
			q.subs = append(q.subs[:i], q.subs[i+1:]...)
			break
		}
	}
	var back []message
	for _, m := range sub.unacked {
		m.redelivered = true
		back = append(back, m)
	}
	sortByID(back)
	q.ready = append(back, q.ready...)
}

func (s *session) cleanup() {
	s.kill()
	b := s.b
	b.mu.Lock()
	delete(b.sessions, s)
	var queues []*queue
	for _, sub := range s.subs {
		queues = append(queues, sub.q)
		s.dropSub(sub)
	}
	var out deliveries
	for _, q := range queues {
		if b.queues[qkey(q.vhost, q.name)] == q {
			out = append(out, b.dispatch(q)...)
		}
	}
	b.mu.Unlock()
	out.send()
	close(s.gone)
}

// sortByID orders messages by publication (ids are m-<sequence>).
func sortByID(ms []message) {
	n := func(id string) int { v, _ := strconv.Atoi(strings.TrimPrefix(id, "m-")); return v }
	slices.SortFunc(ms, func(a, b message) int { return n(a.id) - n(b.id) })
}
