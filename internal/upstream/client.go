package upstream

import (
	"net/http"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"go.uber.org/zap"
)

// RetryOptions configure the retrying layer.
type RetryOptions struct {
	Policy RetryPolicy
	// Unsafe reports the requests that may have been applied when their answer is lost (creates
	// of objects with server-assigned ids); they are retried under UnsafePolicy, all others under
	// SafePolicy. Nil: every request is safe to repeat.
	Unsafe func(*http.Request) bool
	// UnsafeStatuses replaces the answers (429 and 503) after which an unsafe request is
	// repeated, for an upstream whose gateway is known to answer another status only when the
	// request never reached the service.
	UnsafeStatuses []int
	// Name names the upstream in log lines ("waldur", "rancher", …).
	Name   string
	Logger *zap.Logger // nil: no logging
}

// NewRetryable returns a go-retryablehttp client that sends each attempt with attempt (see
// Attempt) and retries every request under SafePolicy with Backoff. Its error handler passes
// the last response or error through unchanged, so the caller classifies it; o.Unsafe is not
// consulted (use NewRetryTransport for method-aware retries).
func NewRetryable(attempt *http.Client, o RetryOptions) *retryablehttp.Client {
	return retryable(attempt, o, SafePolicy)
}

func retryable(attempt *http.Client, o RetryOptions, check retryablehttp.CheckRetry) *retryablehttp.Client {
	rc := &retryablehttp.Client{
		HTTPClient:   attempt,
		RetryWaitMin: o.Policy.WaitMin,
		RetryWaitMax: o.Policy.WaitMax,
		RetryMax:     max(o.Policy.Max, 0),
		CheckRetry:   ProbeAware(check),
		Backoff:      Backoff,
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
	}
	if o.Logger != nil {
		rc.Logger = leveled{log: o.Logger, name: o.Name}
	}
	return rc
}

// RetryTransport is an http.RoundTripper that sends each request through attempt clients,
// retrying it under SafePolicy or, for requests RetryOptions.Unsafe reports, the unsafe
// policy. Request bodies are buffered so they can be sent again.
type RetryTransport struct {
	safe, unsafe *retryablehttp.RoundTripper
	isUnsafe     func(*http.Request) bool
	attempt      *http.Client
}

// NewRetryTransport builds a RetryTransport over attempt (see Attempt).
func NewRetryTransport(attempt *http.Client, o RetryOptions) *RetryTransport {
	statuses := o.UnsafeStatuses
	if statuses == nil {
		statuses = defaultUnsafeStatuses
	}
	return &RetryTransport{
		safe:     &retryablehttp.RoundTripper{Client: retryable(attempt, o, SafePolicy)},
		unsafe:   &retryablehttp.RoundTripper{Client: retryable(attempt, o, unsafePolicy(statuses))},
		isUnsafe: o.Unsafe,
		attempt:  attempt,
	}
}

// RoundTrip implements http.RoundTripper.
func (t *RetryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.isUnsafe != nil && t.isUnsafe(req) {
		return t.unsafe.RoundTrip(req)
	}
	return t.safe.RoundTrip(req)
}

// CloseIdleConnections releases the pooled connections of the attempt client.
func (t *RetryTransport) CloseIdleConnections() { t.attempt.CloseIdleConnections() }

// ClientOptions configure NewClient.
type ClientOptions struct {
	Transport TransportOptions  // used when Base is nil
	Base      http.RoundTripper // innermost transport (tests inject faults here); nil: Transport(o.Transport)
	Timeout   time.Duration     // per attempt; zero: DefaultAttemptTimeout
	Retry     RetryOptions
}

// NewClient returns a client whose transport retries as NewRetryTransport does, over a
// keep-alive transport, with no redirects followed at either level.
func NewClient(o ClientOptions) *http.Client {
	base := o.Base
	if base == nil {
		base = Transport(o.Transport)
	}
	return &http.Client{Transport: NewRetryTransport(Attempt(base, o.Timeout), o.Retry), CheckRedirect: NoRedirect}
}
