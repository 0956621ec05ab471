package keycloak

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/upstream"
)

// Config is the Keycloak admin connection.
type Config struct {
	URL       string        // e.g. https://kc.example/auth/ (normalised to end with "/")
	Realm     string        // managed realm (default "waldur")
	UserRealm string        // realm of the admin user (default "master")
	ClientID  string        // default "admin-cli"
	Username  string        // admin user for the password grant
	Password  secret.Secret // its password
	VerifyTLS bool          // false disables certificate verification (callers default it to true)
	Timeout   time.Duration // per request attempt, default 30s
}

// Defaults of the incumbent's keycloak settings.
const (
	DefaultRealm     = "waldur"
	DefaultUserRealm = "master"
	DefaultClientID  = "admin-cli"
	DefaultTimeout   = 30 * time.Second
)

// withDefaults fills defaults and validates. The URL keeps a trailing "/" so that joining
// "admin/realms/…" never drops its last segment (the urljoin pitfall of the incumbent).
func (c Config) withDefaults() (Config, error) {
	u, err := url.Parse(strings.TrimSpace(c.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("keycloak URL %q is not an http(s) URL", c.URL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return c, fmt.Errorf("keycloak URL %q must not have a query or fragment", c.URL)
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/"
	u.RawPath = ""
	c.URL = u.String()
	if c.Realm == "" {
		c.Realm = DefaultRealm
	}
	if c.UserRealm == "" {
		c.UserRealm = DefaultUserRealm
	}
	if c.ClientID == "" {
		c.ClientID = DefaultClientID
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Username == "" {
		return c, fmt.Errorf("keycloak username is empty")
	}
	if c.Password.IsZero() {
		return c, fmt.Errorf("keycloak password for %q is empty", c.Username)
	}
	return c, nil
}

// Option adjusts a Client.
type Option func(*options)

type options struct {
	httpClient *http.Client
	retryMax   int
	waitMin    time.Duration
	waitMax    time.Duration
	now        func() time.Time
}

func defaultOptions() options {
	return options{retryMax: 4, waitMin: 250 * time.Millisecond, waitMax: 8 * time.Second, now: time.Now}
}

// WithHTTPClient sets the HTTP client each attempt uses (tests; custom proxies). Its redirect
// policy is replaced by "never follow"; a zero Timeout becomes Config.Timeout.
func WithHTTPClient(hc *http.Client) Option {
	return func(o *options) { o.httpClient = hc }
}

// WithRetry bounds retries of network errors, 5xx and 429: maxRetries after the first attempt,
// exponential backoff with jitter between waitMin and waitMax (Retry-After honoured).
func WithRetry(maxRetries int, waitMin, waitMax time.Duration) Option {
	return func(o *options) {
		o.retryMax = max(maxRetries, 0)
		if waitMin > 0 {
			o.waitMin = waitMin
		}
		if waitMax > 0 {
			o.waitMax = waitMax
		}
		o.waitMax = max(o.waitMax, o.waitMin)
	}
}

// WithUpstream applies the retry settings of the configuration's upstreams.keycloak section;
// what it leaves unset keeps the defaults (4 retries, 250ms to 8s). Its timeout is
// Config.Timeout's business.
func WithUpstream(s upstream.Settings) Option {
	return func(o *options) {
		p := s.RetryPolicy().Or(upstream.RetryPolicy{Max: o.retryMax, WaitMin: o.waitMin, WaitMax: o.waitMax})
		o.retryMax, o.waitMin, o.waitMax = p.Max, p.WaitMin, max(p.WaitMax, p.WaitMin)
	}
}

// WithClock sets the clock used for token expiry (tests).
func WithClock(now func() time.Time) Option {
	return func(o *options) {
		if now != nil {
			o.now = now
		}
	}
}
