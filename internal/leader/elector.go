package leader

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/rest"
)

// Config says which Lease to campaign for and how.
type Config struct {
	Namespace     string
	Name          string
	Identity      string // unique per replica
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	REST          *rest.Config
}

// Elector campaigns for the Lease and runs the work while it holds it.
type Elector struct {
	cfg     Config
	lease   *lease
	log     *zap.Logger
	observe func(event string) // "acquired" when work starts; "lost" or "ended" after it stopped

	leading  atomic.Bool
	leader   atomic.Value // string: the last observed holder
	acquired atomic.Value // time.Time: when that holder took the lease (zero: not known)
}

// New validates cfg and builds the elector; it makes no network call.
func New(cfg Config, log *zap.Logger, observe func(event string)) (*Elector, error) {
	if cfg.REST == nil {
		return nil, errors.New("no Kubernetes client configuration")
	}
	if cfg.RetryPeriod <= 0 || cfg.RenewDeadline <= cfg.RetryPeriod || cfg.LeaseDuration <= cfg.RenewDeadline {
		return nil, fmt.Errorf("lease timing: need lease duration (%s) > renew deadline (%s) > retry period (%s) > 0",
			cfg.LeaseDuration, cfg.RenewDeadline, cfg.RetryPeriod)
	}
	l, err := newLease(cfg.REST, cfg.Namespace, cfg.Name, cfg.Identity, cfg.LeaseDuration)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	if observe == nil {
		observe = func(string) {}
	}
	e := &Elector{cfg: cfg, lease: l, observe: observe,
		log: log.With(zap.String("lease", cfg.Namespace+"/"+cfg.Name), zap.String("identity", cfg.Identity))}
	e.leader.Store("")
	e.acquired.Store(time.Time{})
	return e, nil
}

// Leading reports whether this replica is working as the leader right now.
func (e *Elector) Leading() bool { return e.leading.Load() }

// Leader is the holder of the Lease last observed ("" before the first observation).
func (e *Elector) Leader() string { return e.leader.Load().(string) }

// Acquired is when the holder last observed took the lease (the Lease's acquireTime; zero
// before the first observation or when the Lease does not say).
func (e *Elector) Acquired() time.Time { return e.acquired.Load().(time.Time) }

// Identity is this replica's identity in the Lease.
func (e *Elector) Identity() string { return e.cfg.Identity }

// Run campaigns until ctx is cancelled. Each time this replica becomes leader it calls lead with
// a fence context that is cancelled the moment the lease is lost; lead must stop gracefully when
// ctx is cancelled and at once when fence is, and return only when its work has stopped. After
// a lost lease Run campaigns again. On a graceful stop it releases the lease.
func (e *Elector) Run(ctx context.Context, lead func(fence context.Context)) error {
	for ctx.Err() == nil {
		e.term(ctx, lead)
	}
	return nil
}

// term is one campaign: wait for the lease (a candidate stops at once when ctx is cancelled),
// work while holding it, return when it is lost or the work has stopped.
func (e *Elector) term(ctx context.Context, lead func(fence context.Context)) {
	sent, ok := e.acquire(ctx)
	if !ok {
		return
	}
	if ctx.Err() != nil {
		e.release()
		return
	}
	if time.Since(sent) >= e.cfg.RenewDeadline {
		return // the answer came too late to work on: the next campaign renews or loses it
	}
	// Renewal goes on while the work finishes after a graceful stop (ctx cancelled), so the
	// lease is not lost half-way through a shutdown.
	renewCtx, stopRenewing := context.WithCancel(context.WithoutCancel(ctx))
	fence, lose := context.WithCancel(renewCtx)
	renewed := make(chan struct{})
	go func() { defer close(renewed); e.renew(renewCtx, lose, sent) }()
	e.work(fence, lead)
	lost := fence.Err() != nil && renewCtx.Err() == nil
	stopRenewing()
	<-renewed
	lose()
	if !lost && ctx.Err() != nil {
		e.release()
	}
}

// acquire tries every retry period (with jitter) until this replica holds the lease, or ctx is
// cancelled (false). Each attempt is bounded by the renew deadline, like a renewal: an answer
// that takes longer is not waited for. It returns when the winning attempt began, before its
// requests were sent: the other replicas may have seen the record from that moment on, so the
// fence clock starts there (renew), not when the answer arrived. A delayed answer otherwise let
// the new leader work past the moment another replica judged its lease expired.
func (e *Elector) acquire(ctx context.Context) (time.Time, bool) {
	for {
		sent := time.Now()
		actx, cancel := context.WithTimeout(ctx, e.cfg.RenewDeadline)
		holder, ok, err := e.lease.tryAcquireOrRenew(actx)
		cancel()
		e.saw(holder)
		if ok {
			return sent, true
		}
		if err != nil && !errors.Is(err, errHeld) && ctx.Err() == nil {
			e.log.Debug("lease not acquired", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return time.Time{}, false
		case <-time.After(jitter(e.cfg.RetryPeriod)):
		}
	}
}

// renew writes a renewal every retry period. The work is fenced (lose) the moment the lease is
// seen held by another replica, or when no renewal has succeeded for the renew deadline — a
// request hanging past it is cut off — which is before any other replica can judge the lease
// expired (renew deadline < lease duration, counted from when they saw the last renewal). The
// clock starts at last: when the acquiring attempt began.
func (e *Elector) renew(ctx context.Context, lose context.CancelFunc, last time.Time) {
	for {
		// the next renewal, or the deadline if it comes first (then the work is fenced there)
		wait := min(e.cfg.RetryPeriod, max(time.Until(last.Add(e.cfg.RenewDeadline)), 0))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		start, deadline := time.Now(), last.Add(e.cfg.RenewDeadline)
		rctx, cancel := context.WithDeadline(ctx, deadline)
		holder, ok, err := e.lease.tryAcquireOrRenew(rctx)
		cancel()
		e.saw(holder)
		switch {
		case ok:
			last = start
		case ctx.Err() != nil:
			return
		case errors.Is(err, errHeld):
			e.log.Warn("lease taken by another replica", zap.String("leader", holder))
			lose()
			return
		case !time.Now().Before(deadline):
			e.log.Warn("lease not renewed within the renew deadline", zap.Duration("renew_deadline", e.cfg.RenewDeadline), zap.Error(err))
			lose()
			return
		case err != nil:
			e.log.Debug("lease renewal failed; retrying", zap.Error(err))
		}
	}
}

// jitter spreads retries over [d, 1.2 d) so replicas do not retry in step.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration(mrand.Int64N(int64(d)/5+1))
}

// work runs lead for one term and reports the term's start and end.
func (e *Elector) work(fence context.Context, lead func(fence context.Context)) {
	start := time.Now()
	e.leading.Store(true)
	e.observe("acquired")
	e.log.Info("leading: work started")
	lead(fence)
	e.leading.Store(false)
	if fence.Err() != nil {
		e.observe("lost")
		e.log.Warn("lease lost: work stopped", zap.Duration("term", time.Since(start)))
	} else {
		e.observe("ended")
		e.log.Info("leadership ended: work stopped", zap.Duration("term", time.Since(start)))
	}
}

// saw records the holder observed in the lease, and when it took the lease. It runs in the
// goroutine that just read or wrote the lease.
func (e *Elector) saw(holder string) {
	if holder == "" {
		return
	}
	if at := e.lease.observed.AcquireTime; at != nil && deref(e.lease.observed.HolderIdentity) == holder {
		e.acquired.Store(at.Time)
	}
	if holder == e.Leader() {
		return
	}
	e.leader.Store(holder)
	if holder != e.cfg.Identity {
		e.log.Info("leader observed", zap.String("leader", holder))
	}
}

// release gives the lease up if this replica still holds it, so a standby takes over at its next
// retry instead of waiting for the lease to expire.
func (e *Elector) release() {
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.RenewDeadline)
	defer cancel()
	released, err := e.lease.release(ctx)
	if err != nil {
		e.log.Warn("could not release the lease; a standby takes over when it expires", zap.Error(err))
		return
	}
	if released {
		e.log.Info("lease released")
	}
}

// DefaultIdentity is the host name plus a random suffix, unique even for replicas on one host.
func DefaultIdentity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "site-agent"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return strings.ToLower(host) + "_" + hex.EncodeToString(b)
}
