package upstream

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// fast retries quickly: tests count attempts, not time.
var fast = RetryPolicy{Max: 4, WaitMin: time.Millisecond, WaitMax: 2 * time.Millisecond}

// flaky answers the first `fail` requests with status (or resets the connection when status
// is 0) and then echoes the request body with 200.
func flaky(t *testing.T, fail int64, status int) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if n.Add(1) <= fail {
			if status == 0 {
				conn, _, _ := w.(http.Hijacker).Hijack()
				_ = conn.(*net.TCPConn).SetLinger(0)
				conn.Close()
				return
			}
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, "failed")
			return
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestNewClientRetriesByMethod(t *testing.T) {
	create := func(r *http.Request) bool { return NotIdempotent(r) && !strings.HasSuffix(r.URL.Path, "/tokens") }
	cases := []struct {
		name      string
		method    string
		path      string
		status    int // 0: connection reset
		statuses  []int
		wantCalls int64
		wantOK    bool
	}{
		{"GET retried on 503", "GET", "/x", 503, nil, 3, true},
		{"GET retried on 429", "GET", "/x", 429, nil, 3, true},
		{"GET retried on reset", "GET", "/x", 0, nil, 3, true},
		{"PUT retried on 500", "PUT", "/x", 500, nil, 3, true},
		{"DELETE retried on 502", "DELETE", "/x", 502, nil, 3, true},
		{"GET not retried on 501", "GET", "/x", 501, nil, 1, false},
		{"GET not retried on 404", "GET", "/x", 404, nil, 1, false},
		{"POST retried on 503", "POST", "/x", 503, nil, 3, true},
		{"POST retried on 429", "POST", "/x", 429, nil, 3, true},
		{"POST not retried on 500", "POST", "/x", 500, nil, 1, false},
		{"POST not retried on 502 by default", "POST", "/x", 502, nil, 1, false},
		{"POST retried on 502 when listed", "POST", "/x", 502, []int{429, 502, 503}, 3, true},
		{"POST not retried on reset", "POST", "/x", 0, nil, 1, false},
		{"PATCH not retried on reset", "PATCH", "/x", 0, nil, 1, false},
		{"POST the client calls safe retried on reset", "POST", "/tokens", 0, nil, 3, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, n := flaky(t, 2, tc.status)
			hc := NewClient(ClientOptions{Timeout: 5 * time.Second,
				Retry: RetryOptions{Policy: fast, Unsafe: create, UnsafeStatuses: tc.statuses}})
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(`{"a":1}`))
			resp, err := hc.Do(req)
			ok := err == nil && resp.StatusCode == http.StatusOK
			if ok {
				b, _ := io.ReadAll(resp.Body)
				if string(b) != `{"a":1}` {
					t.Errorf("retried request lost its body: %q", b)
				}
			}
			if resp != nil {
				resp.Body.Close()
			}
			if ok != tc.wantOK || n.Load() != tc.wantCalls {
				t.Fatalf("ok=%v calls=%d (err %v); want ok=%v calls=%d", ok, n.Load(), err, tc.wantOK, tc.wantCalls)
			}
		})
	}
}

func TestRetriesAreBoundedAndLastAnswerPassedThrough(t *testing.T) {
	srv, n := flaky(t, 1000, http.StatusServiceUnavailable)
	for _, max := range []int{0, 1, 3} {
		n.Store(0)
		pol := fast
		pol.Max = max
		hc := NewClient(ClientOptions{Retry: RetryOptions{Policy: pol}})
		resp, err := hc.Get(srv.URL)
		if err != nil {
			t.Fatalf("Max=%d: %v", max, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || string(body) != "failed" || n.Load() != int64(max+1) {
			t.Errorf("Max=%d: status %d body %q after %d calls; want 503 \"failed\" after %d", max, resp.StatusCode, body, n.Load(), max+1)
		}
	}
}

func TestNewRetryableRetriesEveryMethod(t *testing.T) {
	srv, n := flaky(t, 2, http.StatusInternalServerError)
	rc := NewRetryable(Attempt(Transport(TransportOptions{}), time.Second), RetryOptions{Policy: fast})
	req, _ := retryablehttp.NewRequest(http.MethodPost, srv.URL, []byte("state"))
	resp, err := rc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "state" || n.Load() != 3 {
		t.Fatalf("status %d body %q calls %d; want 200 \"state\" after 3 calls", resp.StatusCode, body, n.Load())
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	var followed atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/from", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/to", http.StatusFound) })
	mux.HandleFunc("/to", func(http.ResponseWriter, *http.Request) { followed.Add(1) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	hc := NewClient(ClientOptions{Retry: RetryOptions{Policy: fast}})
	resp, err := hc.Get(srv.URL + "/from")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	rc := NewRetryable(Attempt(nil, 0), RetryOptions{Policy: fast})
	resp2, err := rc.Get(srv.URL + "/from")
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp.StatusCode != http.StatusFound || resp2.StatusCode != http.StatusFound || followed.Load() != 0 {
		t.Fatalf("statuses %d, %d; redirect target hit %d times; want 302, 302 and none", resp.StatusCode, resp2.StatusCode, followed.Load())
	}
	if loc := resp.Header.Get("Location"); loc != "/to" {
		t.Errorf("Location = %q", loc)
	}
}

func TestRetryAfterIsWaited(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	hc := NewClient(ClientOptions{Retry: RetryOptions{Policy: RetryPolicy{Max: 2, WaitMin: time.Millisecond, WaitMax: 3 * time.Second}}})
	start := time.Now()
	resp, err := hc.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if el := time.Since(start); resp.StatusCode != http.StatusOK || n.Load() != 2 || el < 900*time.Millisecond || el > 2500*time.Millisecond {
		t.Fatalf("status %d after %d calls in %v; want 200 after 2 calls in about 1s", resp.StatusCode, n.Load(), el)
	}
}

func TestCancelStopsBackoff(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	hc := NewClient(ClientOptions{Retry: RetryOptions{Policy: RetryPolicy{Max: 5, WaitMin: 10 * time.Second, WaitMax: 10 * time.Second}}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	start := time.Now()
	resp, err := hc.Do(req)
	if resp != nil {
		resp.Body.Close()
	}
	if el := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || n.Load() != 1 || el > 3*time.Second {
		t.Fatalf("err %v after %d calls in %v; want deadline exceeded after 1 call, promptly", err, n.Load(), el)
	}
}

func TestRetriesAreLogged(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	srv, _ := flaky(t, 2, http.StatusServiceUnavailable)
	hc := NewClient(ClientOptions{Retry: RetryOptions{Policy: fast, Name: "test", Logger: zap.New(core)}})
	resp, err := hc.Get(srv.URL + "/p?token=secret")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	retries := logs.FilterMessage("retrying test request").All()
	if len(retries) != 2 || logs.Len() != 2 {
		t.Fatalf("%d retry lines of %d: %v", len(retries), logs.Len(), logs.All())
	}
	f := retries[0].ContextMap()
	req, _ := f["request"].(string)
	if !strings.HasPrefix(req, "GET http://") || !strings.HasSuffix(req, "/p (status: 503)") || f["remaining"] != int64(4) {
		t.Errorf("fields %v: want the request without its query, its status and the retries left", f)
	}
}

func TestDropQuery(t *testing.T) {
	cases := map[string]string{
		"GET https://h/p?a=1 (status: 503)": "GET https://h/p (status: 503)",
		"https://h/p?a=1":                   "https://h/p",
		"GET https://h/p":                   "GET https://h/p",
	}
	for in, want := range cases {
		if got := dropQuery(in); got != want {
			t.Errorf("dropQuery(%q) = %q, want %q", in, got, want)
		}
	}
}
