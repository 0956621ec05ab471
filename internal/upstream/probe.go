package upstream

import (
	"context"
	"net/http"

	"github.com/hashicorp/go-retryablehttp"
)

// probingKey marks a context whose requests a person is waiting for.
type probingKey struct{}

// Probing marks ctx for one-off checks a person waits for (diagnostics): a request whose
// connection could not be made — refused, a failed dial, an unknown host (NotSent) — is not
// repeated, since a service that is not there will not be there a moment later either, and the
// person should see that at once. Every other failure is retried as the upstream's settings say,
// within ctx's deadline.
func Probing(ctx context.Context) context.Context {
	return context.WithValue(ctx, probingKey{}, true)
}

// IsProbing reports whether ctx was marked by Probing.
func IsProbing(ctx context.Context) bool {
	v, _ := ctx.Value(probingKey{}).(bool)
	return v
}

// ProbeAware wraps a go-retryablehttp CheckRetry (SafePolicy and the unsafe policy are wrapped
// already; a client with its own policy, such as Vault's, wraps it): on a Probing context an
// error before the request was sent ends the attempts.
func ProbeAware(check retryablehttp.CheckRetry) retryablehttp.CheckRetry {
	return func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		if err != nil && IsProbing(ctx) && NotSent(err) {
			return false, nil
		}
		return check(ctx, resp, err)
	}
}
