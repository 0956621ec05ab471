package upstream

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

// countingTransport counts the attempts that reach the network.
type countingTransport struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

// A refused connection is retried by the agent, but not for a person waiting (Probing), for
// safe and unsafe requests alike; other failures are retried either way.
func TestProbingDoesNotRetryRefusedConnections(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String() + "/x"
	l.Close()
	srv, _ := flaky(t, 100, http.StatusServiceUnavailable)
	cases := []struct {
		name    string
		url     string
		method  string
		probing bool
		want    int64
	}{
		{"agent GET refused", refused, "GET", false, 5},
		{"agent POST refused (not sent: safe to repeat)", refused, "POST", false, 5},
		{"probe GET refused", refused, "GET", true, 1},
		{"probe POST refused", refused, "POST", true, 1},
		{"probe GET 503", srv.URL, "GET", true, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ct := &countingTransport{base: http.DefaultTransport}
			hc := NewClient(ClientOptions{Base: ct, Retry: RetryOptions{Policy: fast, Unsafe: NotIdempotent}})
			ctx := context.Background()
			if c.probing {
				ctx = Probing(ctx)
			}
			req, _ := http.NewRequestWithContext(ctx, c.method, c.url, nil)
			if resp, err := hc.Do(req); err == nil {
				resp.Body.Close()
			}
			if got := ct.n.Load(); got != c.want {
				t.Fatalf("%d attempts, want %d", got, c.want)
			}
		})
	}
}
