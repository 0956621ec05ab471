package stomp

import (
	"context"
	"errors"
	"runtime/debug"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/upstream"
)

// refusalWindow: a connection that dies this soon after subscribing, before any message, twice
// in a row, is taken as a refusal. RabbitMQ's Web-STOMP answers a SUBSCRIBE to a missing queue
// or a queue without permission by closing the WebSocket ("STOMP died") without sending the
// ERROR frame; once could also be a broker going down at that moment.
const refusalWindow = 2 * time.Second

// stableAfter is how long a connection must have lasted for its loss to count as a new outage
// (retried at once) rather than one more failed attempt of the same outage.
const stableAfter = 10 * time.Second

// Status is a listener's connection state.
type Status struct {
	Connected bool
	Since     time.Time // when the current state began
	Failures  int       // failed attempts since the last connection
	LastError string
}

// Listener keeps one subscription alive and feeds its messages to a handler.
type Listener struct {
	o   Options
	log *zap.Logger
	sem chan struct{}  // worker slots
	wg  sync.WaitGroup // running handlers

	mu   sync.Mutex
	st   Status
	loud time.Time // last error line of a long outage
}

// NewListener checks the options; it makes no network call.
func NewListener(o Options) (*Listener, error) {
	o, err := o.validate()
	if err != nil {
		return nil, err
	}
	log := o.Logger.With(zap.String("events", o.Name))
	return &Listener{o: o, log: log, sem: make(chan struct{}, o.Workers), st: Status{Since: time.Now()}}, nil
}

// Status reports whether the listener is connected.
func (l *Listener) Status() Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.st
}

// Run connects and reconnects until stop is cancelled; it never gives up. Handlers get work as
// their context, so that work in flight when stop comes can finish (the caller bounds work).
// Run returns once every handler has returned and the connection is closed.
func (l *Listener) Run(stop, work context.Context) error {
	defer l.wg.Wait() // in-flight handlers finish and acknowledge
	r := &round{outage: time.Now()}
	for stop.Err() == nil {
		again, err := l.try(stop, work, r)
		if stop.Err() != nil {
			return nil
		}
		if again {
			continue // a fresh outage after a stable connection: try again at once
		}
		wait := l.delay(r.attempt, r.refused, r.outage)
		l.failed(err, r.attempt, wait)
		r.attempt++
		if !sleep(stop, wait) {
			return nil
		}
	}
	return nil
}

// round is the reconnect loop's memory.
type round struct {
	sess     Session
	prepared bool      // sess is current (Prepare ran since the last refusal)
	attempt  int       // failed attempts of this outage
	refused  bool      // the last failure was a refusal (or Waldur): the slow schedule
	early    int       // connections in a row that died right after subscribing
	outage   time.Time // when this outage began
}

// try prepares if needed, connects and consumes until the connection ends. again says to
// retry at once rather than after a delay.
func (l *Listener) try(stop, work context.Context, r *round) (again bool, err error) {
	if !r.prepared {
		if r.sess, err = l.o.Prepare(stop); err != nil {
			r.refused = true // waiting on Waldur: the slow schedule
			return false, err
		}
		r.prepared = true
	}
	c, err := dial(stop, l.o, r.sess)
	if err != nil {
		r.refused = isRefused(err)
		r.prepared = !r.refused
		return false, err
	}
	r.attempt, r.refused = 0, false
	l.setState(true, "")
	delivered, err := l.consume(stop, work, c)
	if stop.Err() != nil {
		l.setState(false, "")
		l.wg.Wait() // in-flight handlers finish and acknowledge on this connection
		c.close(true)
		return false, nil
	}
	c.close(false)
	lasted := time.Since(c.since)
	if delivered == 0 && lasted < refusalWindow {
		r.early++
	} else {
		r.early = 0
	}
	if r.early >= 2 && !isRefused(err) {
		err = &RefusedError{Message: "connection closed right after subscribing",
			Detail: "the broker refuses the login, the virtual host or the queue " + r.sess.Queue}
	}
	l.setState(false, err.Error())
	r.refused = isRefused(err)
	r.prepared = !r.refused
	l.log.Warn("event connection lost; reconnecting", zap.Error(err), zap.Duration("lasted", lasted))
	if lasted >= stableAfter && !r.refused {
		r.outage = time.Now()
		return true, err
	}
	return false, err
}

// delay is the pause before the next attempt.
func (l *Listener) delay(attempt int, refused bool, outage time.Time) time.Duration {
	b := l.o.Backoff
	if refused {
		return upstream.Backoff(b.RefusedMin, b.RefusedMax, attempt, nil)
	}
	hi := b.Max
	if time.Since(outage) > b.Patience {
		hi = b.LongMax
	}
	return upstream.Backoff(b.Min, hi, attempt, nil)
}

// failed records and logs a failed attempt: every refusal, the first few network failures,
// then one line a minute so that a long outage does not flood the log.
func (l *Listener) failed(err error, attempt int, wait time.Duration) {
	l.mu.Lock()
	l.st.Failures++
	l.st.LastError = err.Error()
	n := l.st.Failures
	l.mu.Unlock()
	fields := []zap.Field{zap.Error(err), zap.Int("failures", n), zap.Duration("retry_in", wait)}
	var ref *RefusedError
	switch {
	case errors.As(err, &ref):
		l.log.Error("event broker refused the subscription; registering it again and retrying", fields...)
	case attempt < 3:
		l.log.Warn("event connection failed; retrying", fields...)
	case l.everyMinute():
		l.log.Error("event broker still unreachable; retrying", fields...)
	}
}

func (l *Listener) everyMinute() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if time.Since(l.loud) < time.Minute {
		return false
	}
	l.loud = time.Now()
	return true
}

func (l *Listener) setState(connected bool, lastErr string) {
	l.mu.Lock()
	changed := l.st.Connected != connected
	failures := l.st.Failures
	l.st.Connected, l.st.Since = connected, time.Now()
	if connected {
		l.st.Failures = 0
	} else if lastErr != "" {
		l.st.LastError = lastErr
	}
	l.mu.Unlock()
	if connected {
		l.log.Info("event listener connected", zap.Int("after_failures", failures))
	}
	if changed && l.o.OnState != nil {
		l.o.OnState(connected)
	}
}

// consume hands messages to workers until the connection fails or stop comes.
// It returns how many messages arrived.
func (l *Listener) consume(stop, work context.Context, c *conn) (int, error) {
	n := 0
	for {
		select {
		case <-stop.Done():
			return n, nil
		case m, ok := <-c.sub.C:
			if !ok {
				return n, errors.New("subscription closed")
			}
			if m.Err != nil {
				return n, streamError(m.Err)
			}
			n++
			select {
			case l.sem <- struct{}{}:
			case <-stop.Done():
				return n, nil // not acknowledged: the broker delivers it again
			}
			msg := Message{Destination: m.Destination, Body: m.Body, Received: time.Now()}
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				defer func() { <-l.sem }()
				l.handle(work, msg)
				_ = c.stomp.Ack(m) // fails when the connection is gone: then it comes again
			}()
		}
	}
}

func (l *Listener) handle(ctx context.Context, m Message) {
	defer func() {
		if p := recover(); p != nil {
			l.log.Error("event handler panicked", zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
		}
	}()
	l.o.Handle(ctx, m)
}

func isRefused(err error) bool {
	var ref *RefusedError
	return errors.As(err, &ref)
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
