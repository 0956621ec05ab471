package openstack

import (
	"crypto/x509"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/upstream"
)

// HTTPOptions configure NewHTTPClient.
type HTTPOptions struct {
	Base      http.RoundTripper // innermost transport (tests inject faults here); nil = pooled default
	VerifyTLS bool
	RootCAs   *x509.CertPool
	Retries   int
	Timeout   time.Duration // per attempt
	WaitMin   time.Duration // default 250ms
	WaitMax   time.Duration // default 5s
	Logger    *zap.Logger
}

// Pinned says which options the caller's own settings chose (backend_settings request_timeout
// and retries); the upstream section does not override those.
type Pinned struct{ Timeout, Retries bool }

// WithUpstream applies an upstream section (the configuration's upstreams.openstack) where the
// options leave a value unset: the timeout and retries unless pinned, the backoff where the
// options have none.
func WithUpstream(o HTTPOptions, up upstream.Settings, pinned Pinned) HTTPOptions {
	if !pinned.Timeout {
		o.Timeout = up.TimeoutOr(o.Timeout)
	}
	if !pinned.Retries {
		o.Retries = up.RetriesOr(o.Retries)
	}
	if o.WaitMin == 0 {
		o.WaitMin = up.BackoffMin
	}
	if o.WaitMax == 0 {
		o.WaitMax = up.BackoffMax
	}
	return o
}

// CreateStatuses are the answers after which a create is repeated at once: 429 and 503 say
// the request was not processed. A 502 from the gateway in front of a service may come after
// the service made the object (Neutron allows duplicate names), so a create answered 502 is
// left to the next pass, which finds the object by name before creating it.
var CreateStatuses = []int{http.StatusTooManyRequests, http.StatusServiceUnavailable}

// NewHTTPClient is the client gophercloud uses: idempotent requests (GET, HEAD, PUT, PATCH,
// DELETE, and token requests) are retried on network errors, 5xx (but 501) and 429. Other
// POSTs create objects: they are retried only when the request cannot have been processed, so
// a lost response never creates an object twice; the next pass finds it by name instead.
func NewHTTPClient(o HTTPOptions) *http.Client {
	pol := upstream.RetryPolicy{WaitMin: o.WaitMin, WaitMax: o.WaitMax}.Or(
		upstream.RetryPolicy{Max: o.Retries, WaitMin: 250 * time.Millisecond, WaitMax: 5 * time.Second})
	return upstream.NewClient(upstream.ClientOptions{
		Transport: upstream.TransportOptions{VerifyTLS: o.VerifyTLS, RootCAs: o.RootCAs},
		Base:      o.Base,
		Timeout:   o.Timeout,
		Retry: upstream.RetryOptions{Policy: pol, Unsafe: IsCreate, UnsafeStatuses: CreateStatuses,
			Name: "openstack", Logger: o.Logger},
	})
}

// IsCreate reports POSTs that create objects (all but token requests).
func IsCreate(req *http.Request) bool {
	return req.Method == http.MethodPost && !strings.HasSuffix(req.URL.Path, "/auth/tokens")
}
