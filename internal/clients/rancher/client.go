package rancher

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/upstream"
)

// Defaults the configuration's upstreams.rancher (and, for the cluster proxy,
// upstreams.kubernetes) section overrides field by field.
var (
	// DefaultRetry bounds the retries of one request.
	DefaultRetry = upstream.RetryPolicy{Max: 6, WaitMin: 200 * time.Millisecond, WaitMax: 5 * time.Second}
	// DefaultTimeout bounds one attempt, reading the body included.
	DefaultTimeout = 30 * time.Second
)

// Config is one Rancher server: plain values, no configuration types.
type Config struct {
	// URL is the server as the agent reaches it (https://rancher.example.com, optionally with a
	// path prefix; without /v3). Every request goes to its scheme, host and port.
	URL string
	// Token is the API key "token-xxxxx:<secret key>" sent as a bearer token.
	Token secret.Secret
	// TLS: the zero value verifies certificates against the system roots.
	TLS TLS
	// Upstream is the configuration's upstreams.rancher section (retries, backoff, timeout per
	// attempt); what it leaves unset keeps DefaultRetry and DefaultTimeout.
	Upstream upstream.Settings
	// Transport replaces the innermost transport (tests count or break requests); nil: a
	// pooled transport with the TLS settings.
	Transport http.RoundTripper
}

// TLS are the certificate settings of the Rancher server (and of its cluster proxy).
type TLS struct {
	Insecure bool   // accept any certificate (verify_cert: false): the operator's explicit choice
	CAData   []byte // PEM of extra certificate authorities to trust (nil: the system pool only)
}

// Client talks to one Rancher server. It is safe for concurrent use and makes no network call
// until a method is called.
type Client struct {
	base  *url.URL // scheme, host and path prefix (no trailing slash)
	token secret.Secret
	log   *zap.Logger
	pol   upstream.RetryPolicy
	tls   TLS
	tlsc  *tls.Config
	hc    *http.Client // the retrying client: every API request
	quiet *http.Client // the same attempts and retries without log lines (URLs that are credentials)
	// answered is when Rancher last answered a request made with the key with a 2xx (Unix
	// nanoseconds; 0 never): AnsweredWithin.
	answered atomic.Int64
}

// AnsweredWithin: Rancher answered a request made with the key with a 2xx less than d ago —
// it is up and takes the key, as a ping would show.
func (c *Client) AnsweredWithin(d time.Duration) bool {
	at := c.answered.Load()
	return at != 0 && time.Since(time.Unix(0, at)) < d
}

// New checks cfg and returns the client.
func New(cfg Config, log *zap.Logger) (*Client, error) {
	if log == nil {
		log = zap.NewNop()
	}
	base, err := parseBase(cfg.URL)
	if err != nil {
		return nil, err
	}
	var pool *x509.CertPool
	if len(cfg.TLS.CAData) > 0 {
		pool = x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cfg.TLS.CAData) {
			return nil, errors.New("rancher: the CA bundle holds no PEM certificate")
		}
	}
	tr := upstream.Transport(upstream.TransportOptions{VerifyTLS: !cfg.TLS.Insecure, RootCAs: pool})
	var inner http.RoundTripper = tr
	if cfg.Transport != nil {
		inner = cfg.Transport
	}
	pol := cfg.Upstream.RetryPolicy().Or(DefaultRetry)
	attempt := upstream.Attempt(inner, cfg.Upstream.TimeoutOr(DefaultTimeout))
	opts := upstream.RetryOptions{Policy: pol, Unsafe: upstream.NotIdempotent, Name: "rancher", Logger: log}
	c := &Client{base: base, token: cfg.Token, log: log, pol: pol, tls: cfg.TLS, tlsc: tr.TLSClientConfig,
		hc: &http.Client{Transport: upstream.NewRetryTransport(attempt, opts), CheckRedirect: upstream.NoRedirect}}
	opts.Logger = nil
	c.quiet = &http.Client{Transport: upstream.NewRetryTransport(attempt, opts), CheckRedirect: upstream.NoRedirect}
	return c, nil
}

// parseBase accepts an http(s) URL without credentials, query or fragment.
func parseBase(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("rancher: %q is not an http(s) URL", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("rancher: the server URL must not carry credentials, a query or a fragment")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// URL is the server's URL as configured (without a trailing slash).
func (c *Client) URL() string { return c.base.String() }

// TLSConfig is a copy of the TLS settings requests use (for connections the client does not
// make itself, such as a cluster agent's websockets).
func (c *Client) TLSConfig() *tls.Config { return c.tlsc.Clone() }
