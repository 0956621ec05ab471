package leader

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// delayProxy forwards HTTP to the API server; writes to Leases reach it at once, but their
// answers are held back for delay (a slow network, an overloaded apiserver or proxy), so the
// write is stored long before the writer learns it won. Cut makes it answer 503 from then on.
type delayProxy struct {
	srv   *httptest.Server
	delay time.Duration

	mu     sync.Mutex
	cut    bool
	writes []time.Time // when each Lease write was forwarded
}

func newDelayProxy(t *testing.T, env *kubeenv.Env, delay time.Duration) *delayProxy {
	t.Helper()
	target, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(env.CAData)
	up := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	p := &delayProxy{delay: delay}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		cut := p.cut
		p.mu.Unlock()
		if cut {
			http.Error(w, "cut", http.StatusServiceUnavailable)
			return
		}
		body, _ := io.ReadAll(r.Body)
		out, err := http.NewRequestWithContext(r.Context(), r.Method, target.String()+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = r.Header.Clone()
		write := r.Method != http.MethodGet && strings.Contains(r.URL.Path, "/leases")
		if write {
			p.mu.Lock()
			p.writes = append(p.writes, time.Now())
			p.mu.Unlock()
		}
		resp, err := up.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		answer, _ := io.ReadAll(resp.Body)
		if write {
			time.Sleep(p.delay) // stored; the answer is late
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(answer)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *delayProxy) config(env *kubeenv.Env) *rest.Config {
	return &rest.Config{Host: p.srv.URL, BearerToken: env.Token, WarningHandler: rest.NoWarnings{}, Timeout: 10 * time.Second}
}

func (p *delayProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
}

func (p *delayProxy) firstWrite() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.writes) == 0 {
		return time.Time{}
	}
	return p.writes[0]
}

// staleLease leaves a lease whose holder is gone, so the first replica takes it after a lease
// duration.
func staleLease(t *testing.T, env *kubeenv.Env, ns string, lease time.Duration) {
	t.Helper()
	ghost, dur := "ghost", int32(lease/time.Second)
	old := metav1.NewMicroTime(time.Now().Add(-time.Hour))
	_, err := env.Clientset.CoordinationV1().Leases(ns).Create(t.Context(), &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "site-agent"},
		Spec: coordv1.LeaseSpec{HolderIdentity: &ghost, LeaseDurationSeconds: &dur, AcquireTime: &old, RenewTime: &old}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDelayedAcquireAnswerNeverOverlaps: b's acquiring write is stored at once but its answer
// comes delay later; b then loses the API server. A third replica c that saw b's record
// judges b's lease expired a lease duration after seeing it, and takes over. b must have fenced
// its work before that: its fence clock starts when its winning request was sent, not when the
// answer arrived, and an answer later than the renew deadline is not waited for. With the
// clock started at the answer, b worked on for up to the delay after c had started.
//
// Its timing is wider than the other tests' (lease 5 s, renew deadline 3.5 s) so that on a busy
// machine b's answer still comes within the deadline when it should: a delay of 2.5 s leaves
// b a second to spare, and the old clock (2.5 s + 3.5 s) still overruns the lease.
func TestDelayedAcquireAnswerNeverOverlaps(t *testing.T) {
	tm := timing{lease: 5 * time.Second, renew: 3500 * time.Millisecond, retry: 500 * time.Millisecond}
	for _, tc := range []struct {
		name    string
		delay   time.Duration
		mayLead bool
	}{
		{"answer within the renew deadline", 2500 * time.Millisecond, true},
		{"answer after the renew deadline", 4500 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := kubeenv.Shared(t)
			ns := env.Namespace(t, "leader", nil)
			staleLease(t, env, ns, tm.lease)
			proxy := newDelayProxy(t, env, tc.delay)
			wk := &workers{}
			b := startReplicaTimed(t, proxy.config(env), ns, "b", wk, tm)
			waitUntil(t, tm.lease+3*tm.retry+2*time.Second, "b's acquiring write", func() bool { return !proxy.firstWrite().IsZero() })
			// c starts once b's record is stored, so it is c that waits a lease duration
			c := startReplicaTimed(t, adminConfig(env), ns, "c", wk, tm)
			if tc.mayLead {
				waitUntil(t, tm.renew, "b to lead", b.el.Leading)
			}
			proxy.Cut() // b can no longer renew
			waitUntil(t, tm.lease+tm.renew+4*tm.retry+2*tc.delay, "c to take over", c.el.Leading)
			// Leading turns true a moment before the work starts: when b never worked (an answer
			// after the deadline), the count below is still 0 until c's first write.
			waitUntil(t, 5*time.Second, "c to work", func() bool { return c.writesAfter(time.Time{}) > 0 })
			t.Logf("b's write → c leads: %s (answer delay %s, renew deadline %s, lease %s)",
				time.Since(proxy.firstWrite()).Round(time.Millisecond), tc.delay, tm.renew, tm.lease)
			if n := wk.max.Load(); n != 1 {
				t.Fatalf("%d replicas worked at once", n)
			}
			b.mu.Lock()
			ended, writes := b.ended, len(b.writes)
			b.mu.Unlock()
			if tc.mayLead && (writes == 0 || ended.IsZero()) {
				t.Fatalf("b never worked (%d writes): the test proves nothing", writes)
			}
			if !tc.mayLead && writes != 0 {
				t.Fatalf("b worked on an answer that came after the renew deadline (%d writes)", writes)
			}
			if writes > 0 && c.writesAfter(time.Time{}) > 0 && !firstWrite(c).After(ended) {
				t.Fatalf("c wrote at %s, before b's work ended at %s", firstWrite(c), ended)
			}
		})
	}
}
