package upstream

import (
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestTransportTLS(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1) }))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	cases := []struct {
		name    string
		opts    TransportOptions
		wantErr string
	}{
		{"unknown CA is refused and not retried", TransportOptions{VerifyTLS: true}, "certificate"},
		{"extra root is trusted", TransportOptions{VerifyTLS: true, RootCAs: pool}, ""},
		{"verification off", TransportOptions{VerifyTLS: false}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n.Store(0)
			hc := NewClient(ClientOptions{Transport: tc.opts, Retry: RetryOptions{Policy: fast}})
			resp, err := hc.Get(srv.URL)
			if err == nil {
				resp.Body.Close()
			}
			switch {
			case tc.wantErr == "" && (err != nil || n.Load() != 1):
				t.Fatalf("err %v, %d requests served; want success", err, n.Load())
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err %v; want one naming %q", err, tc.wantErr)
			}
		})
	}
}

// TestTransportHandshakeAttempts counts TLS handshakes: a certificate failure is permanent, so
// the client must not try again.
func TestTransportHandshakeAttempts(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	hc := NewClient(ClientOptions{Transport: TransportOptions{VerifyTLS: true}, Retry: RetryOptions{Policy: fast}})
	if resp, err := hc.Get(srv.URL); err == nil {
		resp.Body.Close()
		t.Fatal("an untrusted certificate was accepted")
	}
	time.Sleep(50 * time.Millisecond) // let the server see every connection
	if got := conns.Load(); got != 1 {
		t.Fatalf("%d connections; want 1 (no retry of a certificate failure)", got)
	}
}

func TestTransportProxy(t *testing.T) {
	var seen atomic.Value
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.URL.String())
		_, _ = io.WriteString(w, "via proxy")
	}))
	defer proxy.Close()

	hc := NewClient(ClientOptions{Transport: TransportOptions{Proxy: proxy.URL}, Retry: RetryOptions{Policy: fast}})
	resp, err := hc.Get("http://upstream.invalid/api/x?y=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "via proxy" || seen.Load() != "http://upstream.invalid/api/x?y=1" {
		t.Fatalf("body %q, proxy saw %v", body, seen.Load())
	}

	bad := NewClient(ClientOptions{Transport: TransportOptions{Proxy: "::not a url"}, Retry: RetryOptions{Policy: fast}})
	if resp, err := bad.Get(proxy.URL); err == nil || !strings.Contains(err.Error(), `proxy "::not a url"`) {
		if resp != nil {
			resp.Body.Close()
		}
		t.Fatalf("a bad proxy URL gave %v; want an error naming it", err)
	}
}

func TestAttemptTimeout(t *testing.T) {
	if got := Attempt(nil, 0).Timeout; got != DefaultAttemptTimeout {
		t.Errorf("default timeout %v", got)
	}
	release := make(chan struct{})
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		n.Add(1)
		<-release
	}))
	defer srv.Close()
	defer close(release)
	hc := NewClient(ClientOptions{Timeout: 50 * time.Millisecond, Retry: RetryOptions{Policy: RetryPolicy{Max: 1, WaitMin: time.Millisecond, WaitMax: time.Millisecond}}})
	start := time.Now()
	resp, err := hc.Get(srv.URL)
	if err == nil {
		resp.Body.Close()
	}
	if el := time.Since(start); err == nil || n.Load() != 2 || el > 2*time.Second {
		t.Fatalf("err %v after %d attempts in %v; want a timeout after 2 attempts of 50ms", err, n.Load(), el)
	}
}
