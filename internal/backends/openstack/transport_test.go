package openstack

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/waldur/site-agent/internal/failure"
)

// TestRetriesByRequest checks which requests newHTTPClient repeats: creates (POSTs but token
// requests) only after answers that say nothing was done (not after 502). With two retries a
// repeated request reaches the server three times.
func TestRetriesByRequest(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if code, _ := strconv.Atoi(r.Header.Get("X-Answer")); code != 0 {
			w.WriteHeader(code)
			return
		}
		conn, _, _ := w.(http.Hijacker).Hijack() // a reset after the request arrived
		_ = conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	}))
	defer srv.Close()
	hc := newHTTPClient(httpOptions{Retries: 2, Timeout: 5 * time.Second, WaitMin: time.Millisecond, WaitMax: time.Millisecond})
	cases := []struct {
		method, path string
		answer       int // 0: connection reset
		want         int64
	}{
		{"GET", "/v2.1/servers", 500, 3},
		{"PATCH", "/v3/projects/p", 0, 3},
		{"POST", "/v3/auth/tokens", 0, 3},
		{"POST", "/v2.0/networks", 502, 1},
		{"POST", "/v2.0/networks", 503, 3},
		{"POST", "/v2.0/networks", 500, 1},
		{"POST", "/v2.0/networks", 0, 1},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s %s %d", tc.method, tc.path, tc.answer), func(t *testing.T) {
			calls.Store(0)
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader("{}"))
			req.Header.Set("X-Answer", strconv.Itoa(tc.answer))
			if resp, err := hc.Do(req); err == nil {
				resp.Body.Close()
			}
			if got := calls.Load(); got != tc.want {
				t.Fatalf("%d attempts, want %d", got, tc.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	status := func(code int) error {
		return gophercloud.ErrUnexpectedResponseCode{Method: "GET", URL: "http://h/v3/projects?name=secret", Actual: code, Body: []byte("boom")}
	}
	if err := classify("keystone", status(503)); !failure.IsTransient(err) || !failure.HasStatus(err, 503) {
		t.Errorf("503: %v", err)
	}
	err := classify("keystone", status(404))
	if !errors.Is(err, failure.ErrNotFound) || failure.IsTransient(err) || strings.Contains(err.Error(), "secret") {
		t.Errorf("404 must be not-found, permanent, without the query: %v", err)
	}
	if err := classify("neutron", status(409)); failure.IsTransient(err) || !failure.HasStatus(err, 409) {
		t.Errorf("409: %v", err)
	}
	if err := classify("nova", &net.OpError{Op: "read", Err: errors.New("reset")}); !failure.IsTransient(err) {
		t.Errorf("network errors are transient: %v", err)
	}
}
