package backends

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
	"time"

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

func TestDecodeSettings(t *testing.T) {
	var s struct {
		URL      string            `mapstructure:"backend_url"`
		Password secret.Secret     `mapstructure:"password"`
		Labels   map[string]string `mapstructure:"namespace_labels"`
		Timeout  time.Duration     `mapstructure:"timeout"`
		Retries  int               `mapstructure:"retries"`
	}
	warnings, err := DecodeSettings(map[string]any{
		"backend_url": "https://r", "password": "hunter2-secret", "namespace_labels": map[string]any{"gpu-pool": "a"},
		"timeout": "5s", "retries": 3, "allocation_prefix": "x_", "pasword": "typo",
	}, &s)
	if err != nil {
		t.Fatal(err)
	}
	if s.URL != "https://r" || s.Password.Reveal() != "hunter2-secret" || s.Labels["gpu-pool"] != "a" || s.Timeout != 5*time.Second || s.Retries != 3 {
		t.Fatalf("decoded %+v", s)
	}
	if len(warnings) != 1 || warnings[0] != "backend_settings.pasword" {
		t.Fatalf("warnings %v (core keys are not warnings, typos are)", warnings)
	}
	if _, err := DecodeSettings(map[string]any{"retries": "many"}, &s); err == nil {
		t.Fatal("wrong type accepted")
	}
	if _, err := DecodeSettings(map[string]any{"password": 5}, &s); err == nil {
		t.Fatal("non-string secret accepted")
	}
}

func TestRegistryAndRoles(t *testing.T) {
	r := NewRegistry()
	r.Register("x", func(Params) (Backend, []string, error) { return struct{ Pinger }{}, nil, nil })
	if _, _, err := r.New("y", Params{}); err == nil {
		t.Fatal("unknown name accepted")
	}
	b, _, err := r.New("x", Params{})
	if err != nil {
		t.Fatal(err)
	}
	set := RolesOf("x", b)
	if set.Pinger == nil || set.Provisioner != nil || set.Usage != nil {
		t.Fatalf("roles %+v", set)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("duplicate registration should panic")
		}
	}()
	r.Register("x", nil)
}
