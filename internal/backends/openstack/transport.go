package openstack

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/go-cleanhttp"
	"github.com/hashicorp/go-retryablehttp"
	"go.uber.org/zap"
)

// retryTransport retries failed requests with backoff. Idempotent requests (GET, HEAD, PUT,
// PATCH, DELETE, and token requests) are retried on network errors, 5xx (but 501) and 429.
// Other POSTs create objects: they are retried only when the request cannot have been
// processed — the connection was refused, or the answer was 429, 502 or 503 — so a lost
// response never creates an object twice; the next pass finds it by name instead.
type retryTransport struct {
	safe, create *retryablehttp.RoundTripper
	base         *http.Client
}

// transportOptions configure newTransport.
type transportOptions struct {
	Base    http.RoundTripper // innermost transport (tests inject faults here); nil = pooled default
	TLS     *tls.Config
	Retries int
	Timeout time.Duration // per attempt
	WaitMin time.Duration
	WaitMax time.Duration
	Logger  *zap.Logger
}

func newTransport(o transportOptions) *retryTransport {
	base := o.Base
	if base == nil {
		t := cleanhttp.DefaultPooledTransport()
		t.TLSClientConfig = o.TLS
		base = t
	}
	inner := &http.Client{Transport: base, Timeout: o.Timeout}
	if o.WaitMin == 0 {
		o.WaitMin = 250 * time.Millisecond
	}
	if o.WaitMax == 0 {
		o.WaitMax = 5 * time.Second
	}
	mk := func(policy retryablehttp.CheckRetry) *retryablehttp.RoundTripper {
		return &retryablehttp.RoundTripper{Client: &retryablehttp.Client{
			HTTPClient:   inner,
			Logger:       zapLeveled{o.Logger},
			RetryWaitMin: o.WaitMin,
			RetryWaitMax: o.WaitMax,
			RetryMax:     o.Retries,
			CheckRetry:   policy,
			Backoff:      retryablehttp.DefaultBackoff,
			ErrorHandler: retryablehttp.PassthroughErrorHandler,
		}}
	}
	return &retryTransport{safe: mk(safePolicy), create: mk(createPolicy), base: inner}
}

// RoundTrip implements http.RoundTripper.
func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && !strings.HasSuffix(req.URL.Path, "/auth/tokens") {
		return t.create.RoundTrip(req)
	}
	return t.safe.RoundTrip(req)
}

// CloseIdleConnections releases pooled connections.
func (t *retryTransport) CloseIdleConnections() { t.base.CloseIdleConnections() }

func safePolicy(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		return !permanentTransportError(err), nil
	}
	return resp.StatusCode == http.StatusTooManyRequests ||
		(resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented), nil
}

func createPolicy(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		return notSent(err), nil
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable:
		return true, nil
	}
	return false, nil
}

// notSent reports whether err happened before the request could reach the server.
func notSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// permanentTransportError reports errors that retrying cannot fix (TLS trust).
func permanentTransportError(err error) bool {
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	var verify *tls.CertificateVerificationError
	return errors.As(err, &unknown) || errors.As(err, &invalid) || errors.As(err, &host) || errors.As(err, &verify)
}

// zapLeveled adapts zap to retryablehttp's LeveledLogger; attempts are logged at debug level
// (the caller reports the final outcome). URLs are logged without their query.
type zapLeveled struct{ log *zap.Logger }

func (z zapLeveled) fields(kv []any) []zap.Field {
	out := make([]zap.Field, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := kv[i].(string)
		v := kv[i+1]
		if s, ok := v.(string); ok && k == "url" {
			v, _, _ = strings.Cut(s, "?")
		}
		out = append(out, zap.Any(k, v))
	}
	return out
}

func (z zapLeveled) Error(msg string, kv ...any) { z.debug(msg, kv) }
func (z zapLeveled) Warn(msg string, kv ...any)  { z.debug(msg, kv) }
func (z zapLeveled) Info(string, ...any)         {}
func (z zapLeveled) Debug(msg string, kv ...any) {
	if msg == "retrying request" {
		z.debug(msg, kv)
	}
}

func (z zapLeveled) debug(msg string, kv []any) {
	if z.log != nil {
		z.log.Debug("openstack "+msg, z.fields(kv)...)
	}
}
