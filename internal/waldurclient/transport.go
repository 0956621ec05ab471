package waldurclient

import (
	"net/http"
	"time"

	"github.com/waldur/site-agent/internal/upstream"
)

// TransportOptions configure the shared HTTP client.
type TransportOptions struct {
	VerifyTLS bool
	Proxy     string        // optional proxy URL (global_proxy)
	Timeout   time.Duration // per attempt; default 60s
}

// NewHTTPClient returns the keep-alive client of one attempt; it does not follow redirects (a
// redirect from an API is a configuration error worth seeing, and following it could forward
// credentials). New retries over it.
func NewHTTPClient(o TransportOptions) *http.Client {
	return upstream.Attempt(upstream.Transport(upstream.TransportOptions{VerifyTLS: o.VerifyTLS, Proxy: o.Proxy}), o.Timeout)
}
