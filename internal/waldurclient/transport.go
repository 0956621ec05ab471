package waldurclient

import (
	"crypto/tls"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// TransportOptions configure the shared HTTP client.
type TransportOptions struct {
	VerifyTLS bool
	Proxy     string        // optional proxy URL (global_proxy)
	Timeout   time.Duration // per attempt; default 60s
}

// NewHTTPClient returns a keep-alive HTTP client that does not follow redirects (a redirect from
// an API is a configuration error worth seeing, and following it could forward credentials).
func NewHTTPClient(o TransportOptions) *http.Client {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: !o.VerifyTLS}, //nolint:gosec // verify_ssl: false is an explicit operator choice
	}
	if o.Proxy != "" {
		if pu, err := url.Parse(o.Proxy); err == nil {
			tr.Proxy = http.ProxyURL(pu)
		}
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// JitterBackoff is exponential backoff with jitter (half fixed, half random) that honours a
// Retry-After header in seconds on 429 and 503 responses, capped at max.
func JitterBackoff(lo, hi time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if s := resp.Header.Get("Retry-After"); s != "" {
			if secs, err := strconv.Atoi(s); err == nil && secs >= 0 {
				return min(time.Duration(secs)*time.Second, hi)
			}
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
