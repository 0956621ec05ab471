package rancher

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/upstream"
)

// fast is an upstreams.rancher section with short backoff, so fault tests run quickly.
func fast(retries int) upstream.Settings {
	return upstream.Settings{Retries: &retries, BackoffMin: time.Millisecond, BackoffMax: 5 * time.Millisecond}
}

// recorder is an innermost transport that notes every request the client sends.
type recorder struct {
	mu   sync.Mutex
	next http.RoundTripper
	reqs []string // "METHOD scheme://host/path"
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req.Method+" "+req.URL.Scheme+"://"+req.URL.Host+req.URL.Path)
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

func (r *recorder) sent() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.reqs...)
}

// world is a Rancher simulator behind a TLS server and a client for it.
type world struct {
	sim *ranchersim.Server
	srv *httptest.Server
	c   *Client
	rec *recorder
}

// newWorld starts a simulator with o (Seed 1 and short delays unless set) and a client with
// retries up to 8 and short backoff.
func newWorld(t *testing.T, o ranchersim.Options) *world {
	t.Helper()
	if o.Seed == 0 {
		o.Seed = 1
	}
	for _, d := range []*time.Duration{&o.NodeActiveAfter, &o.DrainDuration, &o.ProvisionDeleteDelay} {
		if *d == 0 {
			*d = 20 * time.Millisecond
		}
	}
	if o.ControllerDelay == 0 {
		o.ControllerDelay = time.Millisecond // quick controllers: the fast retries here outlast them
	}
	w := &world{sim: ranchersim.New(o)}
	w.srv = httptest.NewTLSServer(w.sim)
	t.Cleanup(w.srv.Close)
	w.c = w.client(t, w.srv.URL, fast(8))
	t.Cleanup(func() {
		if !t.Failed() {
			w.sim.AssertNoViolations(t)
		}
	})
	return w
}

// client is a client of the world's simulator at url (verification off: the test server's
// certificate), recording what it sends.
func (w *world) client(t *testing.T, url string, up upstream.Settings) *Client {
	t.Helper()
	w.rec = &recorder{next: w.srv.Client().Transport}
	c, err := New(Config{URL: url, Token: secret.New(w.sim.Token()), Upstream: up, Transport: w.rec}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
