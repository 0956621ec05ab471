package failure

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/waldur/site-agent/internal/secret"
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

// An upstream that echoes the request's credentials in its error body (a gateway answering 400
// with the Authorization header) cannot leak them through the error, however it was built.
func TestStatusErrorsScrubEchoedCredentials(t *testing.T) {
	key := secret.New("s3cr3t-key-echoed-back")
	defer key.Forget()
	echo := []byte(`{"message":"bad request","headers":{"Authorization":"Bearer token-abc:s3cr3t-key-echoed-back"}}`)
	built := []error{
		StatusErr("rancher", "GET", "/v3", 400, echo),
		&StatusError{Service: "kubernetes", Method: "GET", Path: "/api", Code: 400, Body: string(echo)},
		Wrap(errors.New("keystone said: s3cr3t-key-echoed-back"), "login refused for s3cr3t-key-echoed-back"),
	}
	for _, err := range built {
		if text := err.Error(); strings.Contains(text, "s3cr3t") || !strings.Contains(text, secret.Redacted) {
			t.Errorf("error text carries the secret: %s", text)
		}
	}
	if msg, _ := PublicMessage(built[2]); strings.Contains(msg, "s3cr3t") {
		t.Errorf("public message carries the secret: %s", msg)
	}
	// cut after scrubbing: a long body does not keep half of a secret
	long := StatusErr("openstack", "POST", "/v3/auth/tokens", 400, []byte(strings.Repeat("x", 290)+"s3cr3t-key-echoed-back"))
	if strings.Contains(long.Error(), "s3cr3t") {
		t.Errorf("a cut body kept part of the secret: %s", long.Error())
	}
}
