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

	"github.com/waldur/site-agent/internal/secret"
)

// Sentinel errors that modes act on.
var (
	// ErrNotFound: the backend object does not exist.
	ErrNotFound = errors.New("not found")
	// ErrDuplicate: the proposed name belongs to another resource's object.
	ErrDuplicate = errors.New("name already taken by another resource")
	// ErrNotReady: the backend cannot serve right now; orders are left untouched this cycle.
	ErrNotReady = errors.New("backend not ready")
)

// Error is a failure whose message is written for the people who read it in Waldur: it names
// what was wrong with the request or the backend state and contains no secrets. Modes expose
// its message even when expose_backend_error_details is off.
type Error struct {
	Msg string
	Err error // optional cause, not shown to Waldur users when details are hidden
}

func (e *Error) Error() string {
	if e.Err == nil {
		return secret.Scrub(e.Msg)
	}
	return secret.Scrub(e.Msg + ": " + e.Err.Error())
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with a formatted, user-facing message.
func Errorf(format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error with a user-facing message and a cause.
func Wrap(err error, msg string) error {
	if err == nil {
		return nil
	}
	return &Error{Msg: msg, Err: err}
}

// PublicMessage returns the user-facing message of the first *Error in err's chain.
func PublicMessage(err error) (string, bool) {
	var e *Error
	if errors.As(err, &e) {
		return secret.Scrub(e.Msg), true
	}
	return "", false
}

type transientError struct{ err error }

func (t transientError) Error() string { return t.err.Error() }
func (t transientError) Unwrap() error { return t.err }

// Transient marks err as a temporary failure: the operation is retried later and an order is
// never marked erred because of it.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return transientError{err: err}
}

// IsTransient reports whether err is temporary: marked Transient, a network failure (reset,
// refused, timeout, truncated body) or a deadline.
func IsTransient(err error) bool {
	if err == nil || isTrustFailure(err) {
		return false
	}
	var t transientError
	if errors.As(err, &t) {
		return true
	}
	if errors.Is(err, ErrNotReady) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}

// isTrustFailure reports a TLS certificate that cannot be trusted (unknown authority, wrong
// host name, expired): a configuration problem that waiting does not fix, even when a client
// marked the network failure transient.
func isTrustFailure(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	return errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid)
}

// StatusError is an unexpected HTTP status from an upstream API. Its message carries the method,
// the path (never the query, which may hold credentials) and a short excerpt of the body. Every
// upstream error body passes through here, so the body is scrubbed of registered secrets (and
// their encoded forms) when the error is built and again when it is printed: an upstream that
// echoes the request's credentials in its answer cannot leak them, whichever client built it.
type StatusError struct {
	Service string // e.g. "rancher", "keycloak", "waldur"
	Method  string
	Path    string
	Code    int
	Body    string
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("%s %s %s: HTTP %d", e.Service, e.Method, e.Path, e.Code)
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return secret.Scrub(msg)
}

// Temporary reports whether the status is worth retrying later (5xx, 429, 408).
func (e *StatusError) Temporary() bool {
	return e.Code >= 500 || e.Code == 429 || e.Code == 408
}

// StatusErr builds the error for an unexpected status, marked transient when the status is.
func StatusErr(service, method, path string, code int, body []byte) error {
	const max = 300
	b := secret.Scrub(string(body)) // before cutting, which could leave half a secret
	if len(b) > max {
		b = b[:max] + "…"
	}
	err := &StatusError{Service: service, Method: method, Path: path, Code: code, Body: b}
	if err.Temporary() {
		return Transient(err)
	}
	return err
}

// HasStatus reports whether err is an upstream StatusError with the given code.
func HasStatus(err error, code int) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == code
}
