package upstream

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"slices"
	"syscall"

	"github.com/hashicorp/go-retryablehttp"
)

// SafePolicy is the go-retryablehttp CheckRetry for requests that may be repeated: network
// errors, 5xx (but 501) and 429 are retried; a cancelled context, too many redirects, a bad
// URL scheme or header, and an untrusted certificate are not (retrying cannot fix them).
func SafePolicy(ctx context.Context, resp *http.Response, err error) (bool, error) {
	retry, perr := retryablehttp.DefaultRetryPolicy(ctx, resp, err)
	if retry && err != nil && untrusted(err) {
		return false, nil
	}
	return retry, perr
}

// UnsafePolicy is the CheckRetry for requests that may have been applied when their answer is
// lost (creates of objects with server-assigned ids): they are retried only when the request
// never left this host (see NotSent) or the server answered 429 or 503, which say it did
// nothing.
func UnsafePolicy(ctx context.Context, resp *http.Response, err error) (bool, error) {
	return unsafePolicy(defaultUnsafeStatuses)(ctx, resp, err)
}

// defaultUnsafeStatuses are the answers after which an unsafe request is repeated.
var defaultUnsafeStatuses = []int{http.StatusTooManyRequests, http.StatusServiceUnavailable}

// unsafePolicy is UnsafePolicy with other statuses.
func unsafePolicy(statuses []int) retryablehttp.CheckRetry {
	return func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if err != nil {
			return NotSent(err), nil
		}
		return slices.Contains(statuses, resp.StatusCode), nil
	}
}

// NotSent reports whether err happened before any byte of the request reached the server:
// connection refused, a failed dial or proxy connection, or a failed DNS lookup. A reset or an
// EOF after the connection was made may come after the server applied the request.
func NotSent(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && (op.Op == "dial" || op.Op == "proxyconnect") {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// NotIdempotent reports the requests RFC 9110 does not call idempotent (POST and PATCH): the
// Unsafe classifier for an API that creates objects with POST and patches relative values.
func NotIdempotent(req *http.Request) bool {
	return req.Method == http.MethodPost || req.Method == http.MethodPatch
}

// untrusted reports certificate verification failures, however they are wrapped.
func untrusted(err error) bool {
	var verify *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	return errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &invalid) || errors.As(err, &host)
}
