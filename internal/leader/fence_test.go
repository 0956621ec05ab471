package leader

import (
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// cutProxy forwards TCP to the API server until Cut, then drops every connection and refuses
// new ones: the replica behind it loses the API server while the others keep it.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  []net.Conn
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); p.Cut() })
	go p.serve()
	return p
}

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(up, c); up.Close() }()
		go func() { _, _ = io.Copy(c, up); c.Close() }()
	}
}

// Cut drops the connections and refuses new ones.
func (p *cutProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestFenceBeforeAnotherCanTakeOver: the leader loses the API server (its renewals fail, the
// lease stays in its name). It must stop working at its renew deadline, before the standby can
// judge the lease expired and start: the two never work at once, and the takeover follows.
func TestFenceBeforeAnotherCanTakeOver(t *testing.T) {
	env := kubeenv.Shared(t)
	ns := env.Namespace(t, "leader", nil)
	u, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCutProxy(t, u.Host)
	viaProxy := adminConfig(env)
	viaProxy.Host = "https://" + proxy.ln.Addr().String()
	viaProxy.Timeout = 5 * time.Second
	wk := &workers{}
	a := startReplica(t, viaProxy, ns, "a", wk)
	waitUntil(t, 10*time.Second, "a to lead", a.el.Leading)
	b := startReplica(t, adminConfig(env), ns, "b", wk)
	waitUntil(t, 5*time.Second, "b to observe a", func() bool { return b.el.Leader() == "a" })
	cut := time.Now()
	proxy.Cut()
	fenced := waitUntil(t, renewDeadline+2*retryPeriod+time.Second, "a to fence its work", func() bool { return !a.el.Leading() })
	waitUntil(t, leaseDuration+3*retryPeriod+2*time.Second, "b to take over", b.el.Leading)
	a.mu.Lock()
	ended := a.ended
	a.mu.Unlock()
	t.Logf("API server cut: a fenced after %s (renew deadline %s), b took over %s after the cut (lease %s)",
		fenced.Round(time.Millisecond), renewDeadline, time.Since(cut).Round(time.Millisecond), leaseDuration)
	if wk.max.Load() != 1 {
		t.Fatalf("%d replicas worked at once", wk.max.Load())
	}
	if b.writesAfter(time.Time{}) > 0 && !firstWrite(b).After(ended) {
		t.Fatalf("b wrote at %s, before a's work ended at %s", firstWrite(b), ended)
	}
	if got := a.eventList(); len(got) != 2 || got[1] != "lost" {
		t.Fatalf("a's events %v, want [acquired lost]", got)
	}
}

func firstWrite(r *replica) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.writes[0]
}

// TestExpiryJudgedOnOwnClock: a lease whose holder's timestamps are an hour old (a skewed or
// dead holder) is not taken at once: a replica counts the lease duration from when it first saw
// the record, on its own clock, then takes it and counts a transition.
func TestExpiryJudgedOnOwnClock(t *testing.T) {
	env := kubeenv.Shared(t)
	ns := env.Namespace(t, "leader", nil)
	leases := env.Clientset.CoordinationV1().Leases(ns)
	ghost, dur, transitions := "ghost", int32(leaseDuration/time.Second), int32(4)
	old := metav1.NewMicroTime(time.Now().Add(-time.Hour))
	_, err := leases.Create(t.Context(), &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "site-agent"},
		Spec: coordv1.LeaseSpec{HolderIdentity: &ghost, LeaseDurationSeconds: &dur, AcquireTime: &old, RenewTime: &old, LeaseTransitions: &transitions}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	a := startReplica(t, adminConfig(env), ns, "a", &workers{})
	waitUntil(t, 5*time.Second, "a to observe the ghost", func() bool { return a.el.Leader() == "ghost" })
	took := waitUntil(t, leaseDuration+3*retryPeriod+2*time.Second, "a to take the expired lease", a.el.Leading)
	if since := time.Since(start); since < leaseDuration-100*time.Millisecond {
		t.Fatalf("a took the lease %s after first seeing it, before a lease duration (%s) on its own clock", since, leaseDuration)
	}
	l, err := leases.Get(t.Context(), "site-agent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if deref(l.Spec.HolderIdentity) != "a" || deref(l.Spec.LeaseTransitions) != transitions+1 || !l.Spec.AcquireTime.After(old.Time) {
		t.Fatalf("lease after the takeover: %+v", l.Spec)
	}
	acquired := l.Spec.AcquireTime.Time
	time.Sleep(3 * retryPeriod) // renewals keep the acquire time and the transition count
	l, err = leases.Get(t.Context(), "site-agent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !l.Spec.AcquireTime.Time.Equal(acquired) || deref(l.Spec.LeaseTransitions) != transitions+1 || !l.Spec.RenewTime.After(acquired) {
		t.Fatalf("renewals changed the acquire time or transitions, or did not renew: %+v", l.Spec)
	}
	t.Logf("stale lease taken %s after a replica started (lease %s)", took.Round(time.Millisecond), leaseDuration)
}

// TestNeverTwoLeaders: replicas start and stop at random for a while; at no moment do two work.
func TestNeverTwoLeaders(t *testing.T) {
	env := kubeenv.Shared(t)
	ns := env.Namespace(t, "leader", nil)
	wk := &workers{}
	rng := rand.New(rand.NewPCG(7, 11))
	var live []*replica
	for i := 0; i < 12; i++ {
		if len(live) < 3 {
			live = append(live, startReplica(t, adminConfig(env), ns, string(rune('a'+i)), wk))
		}
		time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
		if rng.IntN(2) == 0 && len(live) > 0 {
			k := rng.IntN(len(live))
			live[k].cancel()
			<-live[k].stopped
			live = append(live[:k], live[k+1:]...)
		}
	}
	waitUntil(t, leaseDuration+2*time.Second, "one replica to lead at the end", func() bool {
		for _, r := range live {
			if r.el.Leading() {
				return true
			}
		}
		return len(live) == 0
	})
	if wk.max.Load() != 1 {
		t.Fatalf("%d replicas worked at once", wk.max.Load())
	}
}
