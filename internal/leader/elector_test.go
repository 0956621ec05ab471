package leader

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	coordv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// Short timing so the tests take seconds; the same ratios as the defaults.
const (
	leaseDuration = 3 * time.Second
	renewDeadline = 2 * time.Second
	retryPeriod   = 500 * time.Millisecond
)

// replica is one elector whose work "writes" every 5 ms while it leads.
type replica struct {
	t       *testing.T
	el      *Elector
	cancel  context.CancelFunc
	stopped chan struct{}

	mu     sync.Mutex
	writes []time.Time
	events []string
	ended  time.Time // when the last term's work returned
}

// workers counts replicas working at the same moment, across all replicas of a test.
type workers struct{ now, max atomic.Int32 }

func (w *workers) enter() {
	n := w.now.Add(1)
	for m := w.max.Load(); n > m && !w.max.CompareAndSwap(m, n); m = w.max.Load() {
	}
}

// timing is a lease duration, renew deadline and retry period.
type timing struct{ lease, renew, retry time.Duration }

var testTiming = timing{leaseDuration, renewDeadline, retryPeriod}

func startReplica(t *testing.T, rc *rest.Config, ns, id string, wk *workers) *replica {
	t.Helper()
	return startReplicaTimed(t, rc, ns, id, wk, testTiming)
}

func startReplicaTimed(t *testing.T, rc *rest.Config, ns, id string, wk *workers, tm timing) *replica {
	t.Helper()
	r := &replica{t: t, stopped: make(chan struct{})}
	el, err := New(Config{Namespace: ns, Name: "site-agent", Identity: id, LeaseDuration: tm.lease,
		RenewDeadline: tm.renew, RetryPeriod: tm.retry, REST: rc}, zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)), func(ev string) {
		r.mu.Lock()
		r.events = append(r.events, ev)
		r.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	r.el = el
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		defer close(r.stopped)
		_ = el.Run(ctx, func(fence context.Context) {
			wk.enter()
			defer wk.now.Add(-1)
			for ctx.Err() == nil && fence.Err() == nil {
				r.mu.Lock()
				r.writes = append(r.writes, time.Now())
				r.mu.Unlock()
				select {
				case <-ctx.Done():
				case <-fence.Done():
				case <-time.After(5 * time.Millisecond):
				}
			}
			r.mu.Lock()
			r.ended = time.Now()
			r.mu.Unlock()
		})
	}()
	t.Cleanup(func() { cancel(); <-r.stopped })
	return r
}

func (r *replica) eventList() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

func (r *replica) writesAfter(at time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, w := range r.writes {
		if w.After(at) {
			n++
		}
	}
	return n
}

func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

func adminConfig(env *kubeenv.Env) *rest.Config {
	rc := rest.CopyConfig(env.Config)
	rc.WarningHandler = rest.NoWarnings{}
	return rc
}

// TestOneLeaderAndHandoverOnStop: of two replicas one works; when it stops it releases the lease
// and the other takes over at its next retry, well before the lease would have expired.
func TestOneLeaderAndHandoverOnStop(t *testing.T) {
	env := kubeenv.Shared(t)
	ns := env.Namespace(t, "leader", nil)
	wk := &workers{}
	before := time.Now().Add(-time.Second) // the API server's MicroTime truncates
	a := startReplica(t, adminConfig(env), ns, "a", wk)
	waitUntil(t, 10*time.Second, "a to lead", a.el.Leading)
	b := startReplica(t, adminConfig(env), ns, "b", wk)
	waitUntil(t, 5*time.Second, "b to observe a", func() bool { return b.el.Leader() == "a" })
	time.Sleep(2 * leaseDuration) // b keeps trying; a keeps renewing
	if b.el.Leading() || b.writesAfter(time.Time{}) != 0 {
		t.Fatal("the standby worked while the leader renewed its lease")
	}
	// Both know when a took the lease (the status page shows it); renewals do not move it.
	took := a.el.Acquired()
	if took.Before(before) || took.After(time.Now()) || !b.el.Acquired().Equal(took) {
		t.Fatalf("a took the lease at %v as a sees it, %v as b sees it (test started %v)", took, b.el.Acquired(), before)
	}
	stop := time.Now()
	a.cancel()
	<-a.stopped
	waitUntil(t, leaseDuration, "b to take over after a released the lease", b.el.Leading)
	if !b.el.Acquired().After(took) {
		t.Errorf("after the handover the lease was taken at %v, not after a's %v", b.el.Acquired(), took)
	}
	t.Logf("handover after a graceful stop: %s (retry period %s, lease %s)", time.Since(stop).Round(time.Millisecond), retryPeriod, leaseDuration)
	if wk.max.Load() != 1 {
		t.Fatalf("%d replicas worked at once", wk.max.Load())
	}
	if got := a.eventList(); len(got) != 2 || got[0] != "acquired" || got[1] != "ended" {
		t.Fatalf("a's events %v, want [acquired ended]", got)
	}
}

// TestLostLeaseStopsWorkAtOnce: when another holder takes the lease, the leader's renewals fail;
// at the renew deadline it cancels its work with no grace, writes nothing afterwards, reports
// the loss, and campaigns again until the lease is free.
func TestLostLeaseStopsWorkAtOnce(t *testing.T) {
	env := kubeenv.Shared(t)
	ns := env.Namespace(t, "leader", nil)
	wk := &workers{}
	a := startReplica(t, adminConfig(env), ns, "a", wk)
	waitUntil(t, 10*time.Second, "a to lead", a.el.Leading)
	leases := env.Clientset.CoordinationV1().Leases(ns)
	steal := func(holder string, seconds int32) {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error { // the leader renews meanwhile
			l, err := leases.Get(t.Context(), "site-agent", metav1.GetOptions{})
			if err != nil {
				return err
			}
			now := metav1.NewMicroTime(time.Now())
			l.Spec = coordv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, AcquireTime: &now, RenewTime: &now}
			_, err = leases.Update(t.Context(), l, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	stolen := time.Now()
	steal("thief", 3600)
	took := waitUntil(t, renewDeadline+retryPeriod+5*time.Second, "a to stop working", func() bool { return !a.el.Leading() })
	a.mu.Lock()
	ended := a.ended
	a.mu.Unlock()
	t.Logf("lease taken → work stopped: %s (renew deadline %s)", took.Round(time.Millisecond), renewDeadline)
	if ended.Before(stolen) {
		t.Fatal("work ended before the lease was taken")
	}
	time.Sleep(2 * retryPeriod)
	if n := a.writesAfter(ended); n != 0 {
		t.Fatalf("%d writes after the work was fenced", n)
	}
	if a.el.Leading() || a.el.Leader() != "thief" {
		t.Fatalf("a leads=%v and sees leader %q while the thief holds the lease", a.el.Leading(), a.el.Leader())
	}
	if got := a.eventList(); len(got) != 2 || got[1] != "lost" {
		t.Fatalf("a's events %v, want [acquired lost]", got)
	}
	steal("", 1) // the thief steps down
	waitUntil(t, 5*time.Second, "a to lead again", a.el.Leading)
}
