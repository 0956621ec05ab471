package tunnel

import (
	"context"
	"time"

	"golang.org/x/time/rate"

	"github.com/waldur/site-agent/internal/upstream"
)

// Throttle bounds websocket handshakes across all clusters: at most Concurrency at once and
// Rate per second (bursts of up to Concurrency).
type Throttle struct {
	slots   chan struct{}
	limiter *rate.Limiter
}

// NewThrottle returns a throttle; non-positive values mean 16 at once and 50 per second.
func NewThrottle(concurrency int, perSecond float64) *Throttle {
	if concurrency <= 0 {
		concurrency = 16
	}
	if perSecond <= 0 {
		perSecond = 50
	}
	return &Throttle{slots: make(chan struct{}, concurrency), limiter: rate.NewLimiter(rate.Limit(perSecond), concurrency)}
}

// Acquire waits for a handshake slot; the returned func releases it.
func (t *Throttle) Acquire(ctx context.Context) (func(), error) {
	if err := t.limiter.Wait(ctx); err != nil {
		return nil, err
	}
	select {
	case t.slots <- struct{}{}:
		return func() { <-t.slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Backoff is the reconnect policy: the wait before attempt n (0 after a session that was up)
// doubles from Min to Max, half of it fixed and half random (upstream.Backoff), so clusters
// dropped together come back spread out.
type Backoff struct {
	Min, Max time.Duration
}

// Delay returns the wait before reconnect attempt n.
func (b Backoff) Delay(n int) time.Duration {
	lo, hi := b.Min, b.Max
	if lo <= 0 {
		lo = 500 * time.Millisecond
	}
	if hi < lo {
		hi = lo
	}
	return upstream.Backoff(lo, hi, n, nil)
}
