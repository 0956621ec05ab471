package modes

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

// watchdog knows which cycles are running and since when. The runner's heartbeat ticker asks
// it for their age (metrics) and for cycles that ignore their cancellation (readiness).
type watchdog struct {
	mu      sync.Mutex
	running map[*Unit]time.Time
	stuck   map[*Unit]bool // already reported
}

// track records that u's cycle started; the returned func records that it ended.
func (r *Runner) track(u *Unit) func() {
	w := &r.wd
	w.mu.Lock()
	if w.running == nil {
		w.running, w.stuck = map[*Unit]time.Time{}, map[*Unit]bool{}
	}
	w.running[u] = time.Now()
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		delete(w.running, u)
		delete(w.stuck, u)
		w.mu.Unlock()
		r.Env.Metrics.CycleRunning.WithLabelValues(r.Mode.Name(), u.metricID()).Set(0)
		r.Env.Metrics.CycleStuck.WithLabelValues(r.Mode.Name(), u.metricID()).Set(0)
	}
}

// stuckAfter is how long a cycle may run: its timeout, plus the grace in-flight work gets to
// finish after a stop. A cycle older than that ignores its cancellation.
func (r *Runner) stuckAfter() time.Duration {
	timeout, grace := r.Timeout, r.Grace
	if timeout <= 0 {
		timeout = 30 * time.Minute
	}
	if grace <= 0 {
		grace = 4 * time.Second
	}
	return timeout + grace
}

// Stuck reports the cycles that have run past their timeout and the stop grace, naming each
// offering; nil when there are none. Readiness uses it.
func (r *Runner) Stuck() error {
	limit := r.stuckAfter()
	now := time.Now()
	r.wd.mu.Lock()
	defer r.wd.mu.Unlock()
	var stuck []string
	for u, since := range r.wd.running {
		if age := now.Sub(since); age > limit {
			stuck = append(stuck, fmt.Sprintf("%q running for %s", u.Offering.Name, age.Round(time.Second)))
		}
	}
	if len(stuck) == 0 {
		return nil
	}
	sort.Strings(stuck)
	return fmt.Errorf("%s cycle stuck (past its timeout %s and the %s grace, it ignores cancellation): %s",
		r.Mode.Name(), r.Timeout, limit-r.Timeout, strings.Join(stuck, ", "))
}

// heartbeat beats the heartbeat file every tick until ctx ends, whatever the cycles do, so the
// file proves that the process is alive; each beat also updates the running cycles' age and
// flags (and logs once) those that are stuck.
func (r *Runner) heartbeat(ctx context.Context, tick time.Duration) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		if r.Env.Heartbeat != nil {
			r.Env.Heartbeat.Beat()
		}
		r.observeCycles()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *Runner) observeCycles() {
	limit, now, mode := r.stuckAfter(), time.Now(), r.Mode.Name()
	r.wd.mu.Lock()
	defer r.wd.mu.Unlock()
	for u, since := range r.wd.running {
		age := now.Sub(since)
		r.Env.Metrics.CycleRunning.WithLabelValues(mode, u.metricID()).Set(age.Seconds())
		if age > limit && !r.wd.stuck[u] {
			r.wd.stuck[u] = true
			r.Env.Metrics.CycleStuck.WithLabelValues(mode, u.metricID()).Set(1)
			u.Log.Error("cycle stuck: it outlived its timeout and ignores cancellation", zap.Duration("running", age),
				zap.Duration("timeout", r.Timeout))
		}
	}
}
