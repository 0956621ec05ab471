package upstream

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"testing"
)

// refusedErr is the error of a real request to a closed loopback port.
func refusedErr(t *testing.T) error {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	resp, err := http.Get("http://" + addr + "/")
	if err == nil {
		resp.Body.Close()
		t.Fatal("a closed port answered")
	}
	return err
}

func TestPolicies(t *testing.T) {
	refused := refusedErr(t)
	wrap := func(err error) error { return &url.Error{Op: "Post", URL: "https://h/x", Err: err} }
	errs := map[string]error{
		"refused":    refused,
		"dns":        wrap(&net.DNSError{Err: "no such host", Name: "h", IsNotFound: true}),
		"dial":       wrap(&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("i/o timeout")}),
		"proxy":      wrap(&net.OpError{Op: "proxyconnect", Net: "tcp", Err: errors.New("refused")}),
		"reset":      wrap(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}),
		"eof":        wrap(io.ErrUnexpectedEOF),
		"unknown CA": wrap(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}),
		"hostname":   wrap(x509.HostnameError{Host: "h", Certificate: &x509.Certificate{}}),
		"bare CA":    x509.UnknownAuthorityError{},
	}
	cases := []struct {
		name         string
		err          string // key of errs, or "" for a response
		status       int
		safe, unsafe bool
	}{
		{"200", "", 200, false, false},
		{"404", "", 404, false, false},
		{"409", "", 409, false, false},
		{"429", "", 429, true, true},
		{"500", "", 500, true, false},
		{"501", "", 501, false, false},
		{"502", "", 502, true, false},
		{"503", "", 503, true, true},
		{"504", "", 504, true, false},
		{"connection refused", "refused", 0, true, true},
		{"DNS failure", "dns", 0, true, true},
		{"dial timeout", "dial", 0, true, true},
		{"proxy connect", "proxy", 0, true, true},
		{"reset after sending", "reset", 0, true, false},
		{"EOF after sending", "eof", 0, true, false},
		{"untrusted certificate", "unknown CA", 0, false, false},
		{"wrong host name", "hostname", 0, false, false},
		{"unwrapped x509 error", "bare CA", 0, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var resp *http.Response
			err := errs[tc.err]
			if tc.err == "" {
				resp = &http.Response{StatusCode: tc.status, Status: http.StatusText(tc.status), Header: http.Header{}}
			} else if err == nil {
				t.Fatalf("no error %q", tc.err)
			}
			for _, p := range []struct {
				name  string
				check func(context.Context, *http.Response, error) (bool, error)
				want  bool
			}{{"SafePolicy", SafePolicy, tc.safe}, {"UnsafePolicy", UnsafePolicy, tc.unsafe}} {
				if got, _ := p.check(context.Background(), resp, err); got != p.want {
					t.Errorf("%s = %v, want %v", p.name, got, p.want)
				}
			}
		})
	}
}

func TestPoliciesStopOnCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	resp := &http.Response{StatusCode: 503, Header: http.Header{}}
	for name, check := range map[string]func(context.Context, *http.Response, error) (bool, error){"safe": SafePolicy, "unsafe": UnsafePolicy} {
		if retry, err := check(ctx, resp, nil); retry || !errors.Is(err, context.Canceled) {
			t.Errorf("%s: retry=%v err=%v, want no retry and context.Canceled", name, retry, err)
		}
	}
}

func TestUnsafeStatuses(t *testing.T) {
	check := unsafePolicy([]int{429, 502, 503})
	for code, want := range map[int]bool{502: true, 503: true, 429: true, 500: false, 504: false} {
		if got, _ := check(context.Background(), &http.Response{StatusCode: code}, nil); got != want {
			t.Errorf("%d: retry=%v, want %v", code, got, want)
		}
	}
}

func TestNotIdempotent(t *testing.T) {
	want := map[string]bool{"GET": false, "HEAD": false, "PUT": false, "DELETE": false, "POST": true, "PATCH": true}
	for method, w := range want {
		req, _ := http.NewRequest(method, "http://h/", nil)
		if got := NotIdempotent(req); got != w {
			t.Errorf("%s: %v, want %v", method, got, w)
		}
	}
}
