package rancher

import (
	"context"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/upstream"
)

// defaultRetry bounds retries of one Rancher or Kubernetes request.
var defaultRetry = upstream.RetryPolicy{Max: 6, WaitMin: 200 * time.Millisecond, WaitMax: 5 * time.Second}

// timeoutFor bounds one attempt to an upstream of the backend (rancher, kubernetes, keycloak):
// backend_settings.timeout when the offering sets it, else the upstreams section, else 30s.
func (c *config) timeoutFor(name string) time.Duration {
	if c.timeoutSet {
		return c.timeout
	}
	return c.up.Get(name).TimeoutOr(c.timeout)
}

// policyFor is the retry policy of an upstream: the upstreams section over defaultRetry.
func (c *config) policyFor(name string) upstream.RetryPolicy {
	return c.up.Get(name).RetryPolicy().Or(defaultRetry)
}

// v3Transport is the retrying transport of the Rancher v3 API. POSTs create objects with
// server-assigned ids (projects, bindings), so POST and PATCH are retried only when the
// request cannot have been applied; their callers look for the object before posting again.
func v3Transport(c *config, pol upstream.RetryPolicy, log *zap.Logger) *upstream.RetryTransport {
	attempt := upstream.Attempt(upstream.Transport(upstream.TransportOptions{VerifyTLS: c.verifyTLS}), c.timeoutFor(upstream.Rancher))
	return upstream.NewRetryTransport(attempt, upstream.RetryOptions{Policy: pol, Unsafe: upstream.NotIdempotent, Name: "rancher", Logger: log})
}

// kubeTransport wraps client-go's transport in retries. Kubernetes objects have fixed names,
// so every request may be repeated: a repeated create answers 409, which the callers treat as
// "exists".
func kubeTransport(rt http.RoundTripper, c *config, pol upstream.RetryPolicy, log *zap.Logger) *upstream.RetryTransport {
	return upstream.NewRetryTransport(upstream.Attempt(rt, c.timeoutFor(upstream.Kubernetes)), upstream.RetryOptions{Policy: pol, Name: "kubernetes", Logger: log})
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
