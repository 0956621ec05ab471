package leader

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
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
	lock    *resourcelock.LeaseLock
	log     *zap.Logger
	observe func(event string) // "acquired" when work starts; "lost" or "ended" after it stopped

	leading atomic.Bool
	leader  atomic.Value // string: the last observed holder
}

// New validates cfg and builds the elector; it makes no network call.
func New(cfg Config, log *zap.Logger, observe func(event string)) (*Elector, error) {
	if cfg.REST == nil {
		return nil, errors.New("no Kubernetes client configuration")
	}
	client, err := coordinationv1.NewForConfig(cfg.REST)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	if observe == nil {
		observe = func(string) {}
	}
	e := &Elector{cfg: cfg, log: log.With(zap.String("lease", cfg.Namespace+"/"+cfg.Name), zap.String("identity", cfg.Identity)), observe: observe,
		lock: &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: cfg.Namespace, Name: cfg.Name}, Client: client,
			LockConfig: resourcelock.ResourceLockConfig{Identity: cfg.Identity}}}
	e.leader.Store("")
	return e, nil
}

// Leading reports whether this replica is working as the leader right now.
func (e *Elector) Leading() bool { return e.leading.Load() }

// Leader is the holder of the Lease last observed ("" before the first observation).
func (e *Elector) Leader() string { return e.leader.Load().(string) }

// Identity is this replica's identity in the Lease.
func (e *Elector) Identity() string { return e.cfg.Identity }

// Run campaigns until ctx is cancelled. Each time this replica becomes leader it calls lead with
// a fence context that is cancelled the moment the lease is lost; lead must stop gracefully when
// ctx is cancelled and at once when fence is, and return only when its work has stopped. After
// a lost lease Run campaigns again. On a graceful stop it releases the lease.
func (e *Elector) Run(ctx context.Context, lead func(fence context.Context)) error {
	for ctx.Err() == nil {
		if err := e.term(ctx, lead); err != nil {
			return err
		}
	}
	return nil
}

// term is one campaign: wait for the lease, work while holding it, return when it is lost or ctx
// is cancelled.
func (e *Elector) term(ctx context.Context, lead func(fence context.Context)) error {
	base := klog.NewContext(context.WithoutCancel(ctx), zapr.NewLogger(e.log))
	electCtx, stopElecting := context.WithCancel(base)
	defer stopElecting()
	acquired := make(chan context.Context, 1)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: e.lock, LeaseDuration: e.cfg.LeaseDuration, RenewDeadline: e.cfg.RenewDeadline, RetryPeriod: e.cfg.RetryPeriod,
		Name: e.cfg.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(fence context.Context) { acquired <- fence },
			OnStoppedLeading: func() {},
			OnNewLeader:      e.newLeader,
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	var mu sync.Mutex
	working := false
	stopWatch := context.AfterFunc(ctx, func() { // a candidate stops campaigning at once
		mu.Lock()
		defer mu.Unlock()
		if !working {
			stopElecting()
		}
	})
	defer stopWatch()
	elected := make(chan struct{})
	go func() { defer close(elected); le.Run(electCtx) }()
	select {
	case <-elected:
	case fence := <-acquired:
		mu.Lock()
		working = ctx.Err() == nil
		mu.Unlock()
		if working {
			e.work(fence, lead)
		}
		stopElecting()
		<-elected
	}
	if ctx.Err() != nil {
		e.release()
	}
	return nil
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

func (e *Elector) newLeader(id string) {
	e.leader.Store(id)
	if id != e.cfg.Identity {
		e.log.Info("leader observed", zap.String("leader", id))
	}
}

// release gives the lease up if this replica still holds it, so a standby takes over at its next
// retry instead of waiting for the lease to expire.
func (e *Elector) release() {
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.RenewDeadline)
	defer cancel()
	rec, _, err := e.lock.Get(ctx)
	if err != nil || rec.HolderIdentity != e.cfg.Identity {
		return
	}
	now := metav1.NewTime(time.Now())
	rec.HolderIdentity, rec.LeaseDurationSeconds, rec.AcquireTime, rec.RenewTime = "", 1, now, now
	if err := e.lock.Update(ctx, *rec); err != nil {
		e.log.Warn("could not release the lease; a standby takes over when it expires", zap.Error(err))
		return
	}
	e.log.Info("lease released")
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
