package openstack

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/waldur/site-agent/internal/backends"
)

// flaky answers the first `fail` requests with status (or a reset when status is 0).
func flaky(t *testing.T, fail int64, status int) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if n.Add(1) <= fail {
			if status == 0 {
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.(*net.TCPConn).SetLinger(0)
				conn.Close()
				return
			}
			w.WriteHeader(status)
			return
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestRetryPolicyByMethod(t *testing.T) {
	cases := []struct {
		name      string
		method    string
		path      string
		status    int // 0: connection reset
		wantCalls int64
		wantOK    bool
	}{
		{"GET retried on 503", "GET", "/x", 503, 3, true},
		{"GET retried on 429", "GET", "/x", 429, 3, true},
		{"GET retried on reset", "GET", "/x", 0, 3, true},
		{"PUT retried on 500", "PUT", "/x", 500, 3, true},
		{"GET not retried on 501", "GET", "/x", 501, 1, false},
		{"POST retried on 503", "POST", "/v2.0/networks", 503, 3, true},
		{"POST not retried on 500", "POST", "/v2.0/networks", 500, 1, false},
		{"POST not retried on reset", "POST", "/v2.0/networks", 0, 1, false},
		{"token POST retried on reset", "POST", "/v3/auth/tokens", 0, 3, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, n := flaky(t, 2, tc.status)
			tr := newTransport(transportOptions{Retries: 4, Timeout: 5 * time.Second, WaitMin: time.Millisecond, WaitMax: time.Millisecond})
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(`{"a":1}`))
			resp, err := tr.RoundTrip(req)
			ok := err == nil && resp.StatusCode == 200
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

func TestNotSentRecognisesRefusedConnections(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	_, err := http.Get("http://" + addr + "/")
	if !notSent(err) {
		t.Fatalf("a refused connection is not sent: %v", err)
	}
	if notSent(io.ErrUnexpectedEOF) {
		t.Fatal("an EOF may come after the request was sent")
	}
}

func TestClassify(t *testing.T) {
	status := func(code int) error {
		return gophercloud.ErrUnexpectedResponseCode{Method: "GET", URL: "http://h/v3/projects?name=secret", Actual: code, Body: []byte("boom")}
	}
	if err := classify("keystone", status(503)); !backends.IsTransient(err) || !backends.HasStatus(err, 503) {
		t.Errorf("503: %v", err)
	}
	err := classify("keystone", status(404))
	if !errors.Is(err, backends.ErrNotFound) || backends.IsTransient(err) || strings.Contains(err.Error(), "secret") {
		t.Errorf("404 must be not-found, permanent, without the query: %v", err)
	}
	if err := classify("neutron", status(409)); backends.IsTransient(err) || !backends.HasStatus(err, 409) {
		t.Errorf("409: %v", err)
	}
	if err := classify("nova", &net.OpError{Op: "read", Err: errors.New("reset")}); !backends.IsTransient(err) {
		t.Errorf("network errors are transient: %v", err)
	}
}
