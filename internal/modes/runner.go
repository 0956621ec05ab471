package modes

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
)

// Runner repeats a mode over all offerings.
type Runner struct {
	Env    *Env
	Mode   Mode
	Units  []*Unit
	Period time.Duration
	// Timeout bounds one offering's cycle (default 30 minutes).
	Timeout time.Duration
	// Grace is how long in-flight work may finish after the stop signal (default 4 s).
	Grace time.Duration
	// Tick is how often the heartbeat is beaten, on a ticker independent of cycles (default 30 s).
	Tick time.Duration
	// Register is called once per offering before its first successful cycle.
	Register func(ctx context.Context, u *Unit) error
	// OnCycle is told the outcome of every offering's cycle (readiness).
	OnCycle func(u *Unit, err error)

	wd watchdog
}

// Name is the mode's name.
func (r *Runner) Name() string { return r.Mode.Name() }

// Ready reports the mode's own readiness condition (see Readiness); nil for a mode without one.
func (r *Runner) Ready() error {
	if rd, ok := r.Mode.(Readiness); ok {
		return rd.Ready()
	}
	return nil
}

// Run cycles until ctx is cancelled. The first cycle starts immediately; a Mode that is also a
// Listener gets Listen started once per offering alongside. It returns nil on a clean stop.
//
// Cancelling ctx is a graceful stop: no new work starts and work in flight gets the grace period.
// Cancelling fence (may be nil) stops everything at once: the work context is cancelled with no
// grace, so nothing in flight goes on writing (a leader that lost its lease). Run returns only
// after every goroutine it started has finished.
func (r *Runner) Run(ctx, fence context.Context) error {
	if fence == nil {
		fence = context.Background()
	}
	ctx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	work, stop := r.workContext(ctx)
	defer stop()
	unfence := context.AfterFunc(fence, func() { stop(); cancelRun() })
	defer unfence()
	if l, ok := r.Mode.(Listener); ok {
		var wg sync.WaitGroup
		defer wg.Wait()
		for _, u := range r.Units {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.listen(work, l, u)
			}()
		}
	}
	tick := r.Tick
	if tick <= 0 {
		tick = 30 * time.Second
	}
	beating, stopBeating := context.WithCancel(context.Background())
	beaten := make(chan struct{})
	defer func() { stopBeating(); <-beaten }() // no heart-beat write after Run returns
	go func() {
		defer close(beaten)
		r.heartbeat(beating, tick) // proves the process alive, even during a long cycle
	}()
	r.started()
	for {
		_ = r.RunOnce(work)
		if ctx.Err() != nil {
			return nil
		}
		wait := r.Period + jitter(r.Period)
		r.Env.Status.NextCycle(r.Mode.Name(), time.Now().Add(wait))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// workContext returns a context for cycle work that outlives ctx by the grace period, so an
// order half-way through its backend calls can finish instead of being cut at a random point.
func (r *Runner) workContext(ctx context.Context) (context.Context, context.CancelFunc) {
	grace := r.Grace
	if grace <= 0 {
		grace = 4 * time.Second
	}
	work, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		select {
		case <-ctx.Done():
			select {
			case <-time.After(grace):
			case <-work.Done():
			}
			cancel()
		case <-work.Done():
		}
	}()
	return &stopAware{Context: work, stop: ctx}, cancel
}

// stopAware is a work context that also reports whether a stop was requested, so loops can stop
// picking new items while in-flight ones finish.
type stopAware struct {
	context.Context
	stop context.Context
}

// Stopping reports whether ctx belongs to a run that was asked to stop.
func Stopping(ctx context.Context) bool {
	if s, ok := ctx.(*stopAware); ok {
		return s.stop.Err() != nil
	}
	return ctx.Err() != nil
}

// RunOnce does one cycle for every offering (several at once, each isolated from the others)
// and returns an error naming the offerings that failed.
func (r *Runner) RunOnce(ctx context.Context) error {
	var g errgroup.Group
	g.SetLimit(min(len(r.Units), 4))
	var mu sync.Mutex
	var failed []string
	for _, u := range r.Units {
		g.Go(func() error {
			if err := r.cycle(ctx, u); err != nil {
				mu.Lock()
				failed = append(failed, u.Offering.Name)
				mu.Unlock()
			}
			return nil
		})
	}
	_ = g.Wait()
	if len(failed) > 0 {
		return fmt.Errorf("%s cycle failed for %d offering(s): %v", r.Mode.Name(), len(failed), failed)
	}
	return nil
}

func (r *Runner) cycle(ctx context.Context, u *Unit) (err error) {
	if Stopping(ctx) {
		return nil
	}
	r.Env.touch()
	defer r.track(u)()
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	r.Env.Status.CycleStarted(r.Mode.Name(), u.Offering.UUID)
	defer func() {
		if p := recover(); p != nil {
			r.Env.Metrics.Panics.Inc()
			u.Log.Error("cycle panicked", zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
			err = fmt.Errorf("panic: %v", p)
		}
		r.record(u, start, err)
		if r.OnCycle != nil {
			r.OnCycle(u, err)
		}
	}()
	if !u.registered && r.Register != nil {
		if rerr := r.Register(ctx, u); rerr != nil {
			u.Log.Warn("agent registration failed; will retry next cycle", zap.Error(rerr))
		} else {
			u.registered = true
		}
	}
	err = r.Mode.RunOnce(ctx, u)
	if err != nil && !errors.Is(err, context.Canceled) {
		u.Log.Error("cycle failed", zap.Error(err), zap.Duration("took", time.Since(start)))
	} else if err == nil {
		u.Log.Debug("cycle done", zap.Duration("took", time.Since(start)))
	}
	return err
}

// listen runs one offering's listener, isolated: a panic is logged, not fatal.
func (r *Runner) listen(ctx context.Context, l Listener, u *Unit) {
	defer func() {
		if p := recover(); p != nil {
			r.Env.Metrics.Panics.Inc()
			u.Log.Error("listener panicked", zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
		}
	}()
	if err := l.Listen(ctx, u); err != nil {
		u.Log.Error("listener stopped", zap.Error(err))
	}
}

// jitter spreads cycles of many agents: up to 5% of the period, at most 30 s.
func jitter(period time.Duration) time.Duration {
	j := min(period/20, 30*time.Second)
	if j <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(j)))
}

// forEach runs fn for every item with at most n at once, stopping early (without starting new
// items) when a stop was requested. A panic in one item does not end the process (errgroup's
// goroutines are not the cycle's, whose recover would not see it): the other items run on, and
// the first panic is raised again in the caller once all have finished, where the cycle's
// recover logs and counts it.
func forEach[T any](ctx context.Context, n int, items []T, fn func(T)) {
	var g errgroup.Group
	g.SetLimit(max(n, 1))
	var once sync.Once
	var panicked any
	for _, it := range items {
		if Stopping(ctx) {
			break
		}
		g.Go(func() error {
			defer func() {
				if p := recover(); p != nil {
					once.Do(func() { panicked = fmt.Sprintf("%v\n%s", p, debug.Stack()) })
				}
			}()
			fn(it)
			return nil
		})
	}
	_ = g.Wait()
	if panicked != nil {
		panic(panicked)
	}
}
