package stompsim

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// Options configure a Broker. The zero value is usable.
type Options struct {
	// MaxHeartBeat caps the heart-beat period the broker agrees to (default: none).
	MaxHeartBeat time.Duration
	// Logf, when set, receives one line per connection event.
	Logf func(format string, args ...any)
}

// Stats are counters over the broker's life.
type Stats struct {
	Handshakes  int // WebSocket handshakes attempted (including refused ones)
	Connects    int // successful STOMP logins
	Refused     int // CONNECTs answered with ERROR
	HeartBeats  int // heart-beat frames received from clients
	Delivered   int // MESSAGE frames sent
	Redelivered int // of which redeliveries
	Acked       int // ACK frames received
}

type user struct{ password, vhost string }

type message struct {
	id          string
	body        []byte
	redelivered bool
}

type queue struct {
	name, vhost string
	ready       []message
	subs        []*subscription // round-robin over subscribers with room
	next        int
}

// Broker is the simulator. It is an http.Handler (the Web-STOMP endpoint) and safe for
// concurrent use.
type Broker struct {
	opts Options

	mu       sync.Mutex
	users    map[string]user
	queues   map[string]*queue // vhost + "\x00" + name
	sessions map[*session]bool
	down     bool
	stats    Stats
	seq      int
}

// New returns an empty broker.
func New(opts Options) *Broker {
	return &Broker{opts: opts, users: map[string]user{}, queues: map[string]*queue{}, sessions: map[*session]bool{}}
}

func (b *Broker) logf(format string, args ...any) {
	if b.opts.Logf != nil {
		b.opts.Logf("stompsim: "+format, args...)
	}
}

func qkey(vhost, name string) string { return vhost + "\x00" + name }

// ErrDown is returned by DeclareQueue and Publish while the broker is down.
var ErrDown = errors.New("stompsim: broker is down")

// DeclareQueue creates (or updates) user with password, gives it the virtual host, and
// declares a durable queue there, as Waldur does through RabbitMQ's management API.
func (b *Broker) DeclareQueue(vhost, login, password, name string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.down {
		return ErrDown
	}
	if vhost == "" || login == "" || name == "" {
		return fmt.Errorf("stompsim: declare needs a vhost, a user and a queue name")
	}
	b.users[login] = user{password: password, vhost: vhost}
	if _, ok := b.queues[qkey(vhost, name)]; !ok {
		b.queues[qkey(vhost, name)] = &queue{name: name, vhost: vhost}
	}
	return nil
}

// SetPassword changes a user's password (credentials that no longer match).
func (b *Broker) SetPassword(login, password string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.users[login]
	u.password = password
	b.users[login] = u
}

// DeleteQueue removes a queue; its subscribers are disconnected.
func (b *Broker) DeleteQueue(vhost, name string) {
	b.mu.Lock()
	q := b.queues[qkey(vhost, name)]
	delete(b.queues, qkey(vhost, name))
	var drop []*session
	if q != nil {
		for _, s := range q.subs {
			drop = append(drop, s.sess)
		}
	}
	b.mu.Unlock()
	for _, s := range drop {
		s.kill()
	}
}

// Publish appends a message to a queue and delivers what it can.
func (b *Broker) Publish(vhost, name string, body []byte) error {
	b.mu.Lock()
	if b.down {
		b.mu.Unlock()
		return ErrDown
	}
	q, ok := b.queues[qkey(vhost, name)]
	if !ok {
		b.mu.Unlock()
		return fmt.Errorf("stompsim: no queue %q in vhost %q", name, vhost)
	}
	b.seq++
	q.ready = append(q.ready, message{id: "m-" + strconv.Itoa(b.seq), body: append([]byte(nil), body...)})
	out := b.dispatch(q)
	b.mu.Unlock()
	out.send()
	return nil
}

// Depth is the number of messages waiting in a queue (not yet delivered or given back).
func (b *Broker) Depth(vhost, name string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if q, ok := b.queues[qkey(vhost, name)]; ok {
		return len(q.ready)
	}
	return 0
}

// Stats returns the counters.
func (b *Broker) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stats
}

// Connections is the number of live STOMP sessions.
func (b *Broker) Connections() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for s := range b.sessions {
		if s.loggedIn {
			n++
		}
	}
	return n
}

// DropConnections closes every client connection at once (a broker crash); unacknowledged
// messages go back to their queues before it returns (waiting at most 10 s for the sessions to
// end), as a restarted broker has them ready for the next subscriber: a client that connects
// at once must not find its unacknowledged message still held by the dead session.
func (b *Broker) DropConnections() {
	b.mu.Lock()
	var all []*session
	for s := range b.sessions {
		all = append(all, s)
	}
	b.mu.Unlock()
	for _, s := range all {
		s.kill()
	}
	limit := time.After(10 * time.Second)
	for _, s := range all {
		select {
		case <-s.gone:
		case <-limit:
			return
		}
	}
}

// SetDown takes the broker down (connections dropped, handshakes answered 503, publishing
// fails) or brings it back. Queues and their messages survive, as durable queues do.
func (b *Broker) SetDown(down bool) {
	b.mu.Lock()
	b.down = down
	b.mu.Unlock()
	if down {
		b.DropConnections()
	}
}

// InjectRaw writes raw bytes into the stream of every session subscribed to the queue, as if
// the broker had sent them (for malformed-frame tests).
func (b *Broker) InjectRaw(vhost, name string, raw []byte) int {
	b.mu.Lock()
	var targets []*session
	if q, ok := b.queues[qkey(vhost, name)]; ok {
		for _, s := range q.subs {
			targets = append(targets, s.sess)
		}
	}
	b.mu.Unlock()
	for _, s := range targets {
		s.writeRaw(raw)
	}
	return len(targets)
}

// delivery is a MESSAGE to send once the lock is released.
type delivery struct {
	sub *subscription
	msg message
}

type deliveries []delivery

func (d deliveries) send() {
	for _, x := range d {
		x.sub.sess.deliver(x.sub, x.msg)
	}
}

// dispatch hands ready messages to subscribers with room (prefetch), round-robin. Caller
// holds b.mu.
func (b *Broker) dispatch(q *queue) deliveries {
	var out deliveries
	for len(q.ready) > 0 && len(q.subs) > 0 {
		var target *subscription
		for i := 0; i < len(q.subs); i++ {
			s := q.subs[(q.next+i)%len(q.subs)]
			if s.prefetch == 0 || len(s.unacked) < s.prefetch {
				target = s
				q.next = (q.next + i + 1) % len(q.subs)
				break
			}
		}
		if target == nil {
			break
		}
		m := q.ready[0]
		q.ready = q.ready[1:]
		if target.ack != "auto" {
			target.unacked[m.id] = m
		}
		b.stats.Delivered++
		if m.redelivered {
			b.stats.Redelivered++
		}
		out = append(out, delivery{sub: target, msg: m})
	}
	return out
}
