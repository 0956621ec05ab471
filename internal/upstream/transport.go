package upstream

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// DefaultAttemptTimeout bounds one attempt when the caller gives no timeout.
const DefaultAttemptTimeout = 60 * time.Second

// TransportOptions configure Transport.
type TransportOptions struct {
	// VerifyTLS checks server certificates; false accepts any certificate (an explicit operator
	// choice such as verify_ssl: false).
	VerifyTLS bool
	// RootCAs are the certificate authorities trusted (nil: the system pool), e.g. from a
	// ca_cert setting.
	RootCAs *x509.CertPool
	// Proxy is an http(s) proxy URL (e.g. global_proxy); empty: HTTP(S)_PROXY and NO_PROXY
	// from the environment.
	Proxy string
}

// Transport returns a keep-alive transport for one upstream. A proxy URL that does not parse
// makes every request fail with an error naming it, rather than silently going direct.
func Transport(o TransportOptions) *http.Transport {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: o.RootCAs,
			InsecureSkipVerify: !o.VerifyTLS}, //nolint:gosec // turning verification off is the operator's explicit choice
	}
	if o.Proxy != "" {
		pu, err := url.Parse(o.Proxy)
		if err != nil || pu.Host == "" {
			perr := fmt.Errorf("proxy %q is not a URL", o.Proxy)
			tr.Proxy = func(*http.Request) (*url.URL, error) { return nil, perr }
		} else {
			tr.Proxy = http.ProxyURL(pu)
		}
	}
	return tr
}

// NoRedirect is a CheckRedirect that returns the redirect response itself instead of
// following it.
func NoRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Attempt returns the client of one attempt over base (nil: http.DefaultTransport): timeout
// bounds the attempt including reading the body (zero or less: DefaultAttemptTimeout), and
// redirects are not followed.
func Attempt(base http.RoundTripper, timeout time.Duration) *http.Client {
	if timeout <= 0 {
		timeout = DefaultAttemptTimeout
	}
	return &http.Client{Transport: base, Timeout: timeout, CheckRedirect: NoRedirect}
}
