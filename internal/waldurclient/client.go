package waldurclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/upstream"
)

// maxBody bounds how much of a response (one page of a listing) is read; maxErrorBody how much
// of an error answer (only its start is shown).
const (
	maxBody      = 64 << 20
	maxErrorBody = 64 << 10
)

// RequestInfo describes one finished API call, for metrics and tests.
type RequestInfo struct {
	Method   string
	Endpoint string // path template, e.g. /api/marketplace-orders/{uuid}/
	Status   int    // 0 when no response arrived
	Duration time.Duration
}

// Options configure a Client.
type Options struct {
	BaseURL    string // Waldur base without /api, e.g. https://waldur.example.com
	Token      secret.Secret
	OIDC       *OIDCConfig  // used instead of Token when set
	HTTPClient *http.Client // shared keep-alive client; see NewHTTPClient
	UserAgent  string
	Retry      RetryPolicy
	DryRun     bool // only GET requests are sent; writes are logged and reported as done
	Logger     *zap.Logger
	OnRequest  func(RequestInfo)
	// MaxListItems and MaxListBytes bound one listing, all its pages together (default
	// DefaultMaxListItems, DefaultMaxListBytes): a listing past either fails, naming it.
	MaxListItems int
	MaxListBytes int64
}

// RetryPolicy bounds retries of transient failures: Max retries after the first attempt
// (default 4, negative for none), backoff from WaitMin (default 250ms) to WaitMax (default 8s).
// Every request, POSTs included, is retried on network errors, 5xx and 429: see package
// upstream for why that is safe for Waldur's state transitions.
type RetryPolicy = upstream.RetryPolicy

// defaultRetry are the defaults of RetryPolicy.
var defaultRetry = RetryPolicy{Max: 4, WaitMin: 250 * time.Millisecond, WaitMax: 8 * time.Second}

// Client calls one Waldur deployment with one identity.
type Client struct {
	base      string
	rc        *retryablehttp.Client
	auth      authorizer
	ua        string
	dryRun    bool
	log       *zap.Logger
	onRequest func(RequestInfo)
	bounds    listBounds
}

// New builds a client. It makes no network calls.
func New(opts Options) (*Client, error) {
	u, err := url.Parse(opts.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("waldur base URL %q is not an http(s) URL", opts.BaseURL)
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = NewHTTPClient(TransportOptions{VerifyTLS: true})
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	rc := upstream.NewRetryable(hc, upstream.RetryOptions{Policy: opts.Retry.Or(defaultRetry), Name: "waldur", Logger: log})
	c := &Client{
		base: strings.TrimRight(opts.BaseURL, "/"), rc: rc, ua: opts.UserAgent,
		dryRun: opts.DryRun, log: log, onRequest: opts.OnRequest,
		bounds: listBounds{items: opts.MaxListItems, bytes: opts.MaxListBytes}.orDefaults(),
	}
	if c.ua == "" {
		c.ua = "site-agent"
	}
	if opts.OIDC != nil {
		c.auth = newOIDCAuth(*opts.OIDC, rc)
	} else {
		if opts.Token.IsZero() {
			return nil, fmt.Errorf("waldur client needs a token or OIDC settings")
		}
		c.auth = tokenAuth{token: opts.Token}
	}
	return c, nil
}

// call is one request: Tmpl is the path template ({uuid} is replaced by ID).
type call struct {
	method string
	tmpl   string
	id     string
	query  url.Values
	body   any
}

func (c *Client) url(cl call) string {
	path := cl.tmpl
	if cl.id != "" {
		path = strings.Replace(path, "{uuid}", url.PathEscape(cl.id), 1)
	}
	u := c.base + path
	if len(cl.query) > 0 {
		u += "?" + cl.query.Encode()
	}
	return u
}

// do sends one request and decodes a 2xx JSON response into out (if non-nil). It returns the
// response headers for pagination.
func (c *Client) do(ctx context.Context, cl call, out any) (http.Header, error) {
	if c.dryRun && cl.method != http.MethodGet {
		c.log.Info("dry run: not sending write", zap.String("method", cl.method), zap.String("endpoint", cl.tmpl), zap.String("uuid", cl.id))
		return http.Header{}, nil
	}
	return c.send(ctx, cl, out, c.url(cl), true)
}

func (c *Client) send(ctx context.Context, cl call, out any, target string, retryAuth bool) (http.Header, error) {
	resp, err := c.open(ctx, cl, target, retryAuth)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, failure.Transient(fmt.Errorf("waldur %s %s: reading response: %w", cl.method, cl.tmpl, err))
	}
	if out != nil && len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return nil, fmt.Errorf("waldur %s %s: malformed response: %w", cl.method, cl.tmpl, err)
		}
	}
	return resp.Header, nil
}

// open sends one request and returns its 2xx response, whose body the caller reads and closes.
// Any other status becomes an error (a 401 is tried once more with fresh credentials).
func (c *Client) open(ctx context.Context, cl call, target string, retryAuth bool) (*http.Response, error) {
	var payload []byte
	if cl.body != nil {
		var err error
		if payload, err = json.Marshal(cl.body); err != nil {
			return nil, fmt.Errorf("encode %s %s: %w", cl.method, cl.tmpl, err)
		}
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, cl.method, target, payload)
	if err != nil {
		return nil, err
	}
	authz, err := c.auth.header(ctx)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", authz)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.ua)
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	resp, err := c.rc.Do(req)
	info := RequestInfo{Method: cl.method, Endpoint: cl.tmpl, Duration: time.Since(start)}
	if err != nil {
		c.report(info)
		return nil, failure.Transient(fmt.Errorf("waldur %s %s: %w", cl.method, cl.tmpl, stripURL(err)))
	}
	info.Status = resp.StatusCode
	c.report(info)
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return resp, nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		return nil, failure.Transient(fmt.Errorf("waldur %s %s: reading response: %w", cl.method, cl.tmpl, err))
	}
	if resp.StatusCode == http.StatusUnauthorized && retryAuth && c.auth.invalidate() {
		return c.open(ctx, cl, target, false)
	}
	return nil, failure.StatusErr("waldur", cl.method, c.pathOf(cl), resp.StatusCode, []byte(secret.Scrub(string(data))))
}

func (c *Client) pathOf(cl call) string {
	if cl.id == "" {
		return cl.tmpl
	}
	return strings.Replace(cl.tmpl, "{uuid}", cl.id, 1)
}

func (c *Client) report(info RequestInfo) {
	if c.onRequest != nil {
		c.onRequest(info)
	}
}

// stripURL removes the URL (which may carry query values) from a *url.Error, keeping the cause.
func stripURL(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}
