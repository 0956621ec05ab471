package rancher

import (
	"context"
	"crypto/tls"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"go.uber.org/zap"
)

// retryPolicy bounds retries of one HTTP request.
type retryPolicy struct {
	Max     int           // retries after the first attempt
	WaitMin time.Duration // first backoff
	WaitMax time.Duration // backoff cap
}

var defaultRetry = retryPolicy{Max: 6, WaitMin: 200 * time.Millisecond, WaitMax: 5 * time.Second}

// retryTransport retries transient failures with backoff and jitter (go-retryablehttp).
// Requests that are safe to repeat (GET, PUT, DELETE, and every request when
// allIdempotent is set, as for Kubernetes objects with fixed names) are retried on network
// errors, 5xx and 429. POSTs that create objects with server-assigned ids (Rancher projects,
// bindings) are only retried when the server says it did nothing (429, 503) or the connection
// was refused; their callers look for the object before posting again.
type retryTransport struct {
	safe, unsafe  *retryablehttp.Client
	allIdempotent bool
}

func newRetryTransport(base http.RoundTripper, timeout time.Duration, pol retryPolicy, allIdempotent bool, log *zap.Logger) *retryTransport {
	mk := func(check retryablehttp.CheckRetry) *retryablehttp.Client {
		return &retryablehttp.Client{
			HTTPClient:   &http.Client{Transport: base, CheckRedirect: noRedirect, Timeout: timeout},
			RetryWaitMin: pol.WaitMin,
			RetryWaitMax: pol.WaitMax,
			RetryMax:     pol.Max,
			CheckRetry:   check,
			Backoff:      jitterBackoff,
			ErrorHandler: retryablehttp.PassthroughErrorHandler,
			RequestLogHook: func(_ retryablehttp.Logger, r *http.Request, attempt int) {
				if attempt > 0 {
					log.Debug("retrying request", zap.String("method", r.Method), zap.String("path", r.URL.Path), zap.Int("attempt", attempt))
				}
			},
		}
	}
	return &retryTransport{safe: mk(retryablehttp.DefaultRetryPolicy), unsafe: mk(unsafeRetryPolicy), allIdempotent: allIdempotent}
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rc := t.safe
	if !t.allIdempotent && (req.Method == http.MethodPost || req.Method == http.MethodPatch) {
		rc = t.unsafe
	}
	rreq, err := retryablehttp.FromRequest(req)
	if err != nil {
		return nil, err
	}
	return rc.Do(rreq)
}

// unsafeRetryPolicy retries a non-idempotent request only when it cannot have been applied.
func unsafeRetryPolicy(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		return errors.Is(err, syscall.ECONNREFUSED), nil
	}
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable, nil
}

// jitterBackoff is exponential backoff with jitter that honours Retry-After (seconds) on 429
// and 503, capped at hi.
func jitterBackoff(lo, hi time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs >= 0 {
			return min(time.Duration(secs)*time.Second, hi)
		}
	}
	d := lo
	for i := 0; i < attempt && d < hi; i++ {
		d *= 2
	}
	d = min(d, hi)
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + time.Duration(rand.Int64N(int64(half)+1))
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// baseTransport is the keep-alive transport shared by the Rancher and Kubernetes clients.
func baseTransport(verifyTLS bool) *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: !verifyTLS}, //nolint:gosec // verify_cert: false is the operator's explicit choice
	}
}

// ctxTransport gives a context to requests built without one (norman's clientbase uses
// http.NewRequest), so cancellation and deadlines reach every Rancher call.
type ctxTransport struct {
	ctx  context.Context
	next http.RoundTripper
}

func (t ctxTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.next.RoundTrip(req.WithContext(t.ctx))
}
