package failure

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
)

func TestIsTransient(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"marked", Transient(errors.New("x")), true},
		{"wrapped mark", fmt.Errorf("ctx: %w", Transient(errors.New("x"))), true},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"refused", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{"eof", io.ErrUnexpectedEOF, true},
		{"deadline", context.DeadlineExceeded, true},
		{"not ready", ErrNotReady, true},
		{"5xx", StatusErr("rancher", "GET", "/v3", 503, nil), true},
		{"429", StatusErr("keycloak", "GET", "/x", 429, nil), true},
		{"4xx", StatusErr("rancher", "POST", "/v3/projects", 422, []byte("bad")), false},
		{"user error", Errorf("slug missing"), false},
		{"not found", ErrNotFound, false},
		{"canceled", context.Canceled, false},
		{"untrusted certificate marked transient", Transient(fmt.Errorf("get: %w", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}})), false},
		{"wrong host name", &net.OpError{Op: "dial", Err: x509.HostnameError{Host: "x"}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := IsTransient(c.err); got != c.want {
				t.Fatalf("IsTransient(%v) = %v", c.err, got)
			}
		})
	}
}

func TestStatusErrTruncatesAndNamesCall(t *testing.T) {
	body := make([]byte, 1000)
	for i := range body {
		body[i] = 'x'
	}
	err := StatusErr("rancher", "POST", "/v3/projects", 400, body)
	if len(err.Error()) > 400 || !HasStatus(err, 400) {
		t.Fatalf("%d chars: %v", len(err.Error()), err)
	}
	if msg, ok := PublicMessage(Wrap(err, "could not create project")); !ok || msg != "could not create project" {
		t.Fatalf("public message %q", msg)
	}
}
