package rancherv1

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

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/upstream"
)

// Config is the Rancher connection.
type Config struct {
	URL       string        // https://rancher.example.com (no /v3)
	Token     secret.Secret // "access:secret" API key
	VerifyTLS bool
	Timeout   time.Duration        // one attempt (default 30 s)
	Retry     upstream.RetryPolicy // default 6 attempts, 200 ms – 5 s
	// Transport replaces the innermost transport (tests count or break requests).
	Transport http.RoundTripper
}

// Client implements rke2.Rancher.
type Client struct {
	base  string
	token secret.Secret
	hc    *http.Client
	log   *zap.Logger
}

var defaultRetry = upstream.RetryPolicy{Max: 6, WaitMin: 200 * time.Millisecond, WaitMax: 5 * time.Second}

// New returns the client; it makes no network call.
func New(cfg Config, log *zap.Logger) *Client {
	if log == nil {
		log = zap.NewNop()
	}
	base := cfg.Transport
	if base == nil {
		base = upstream.Transport(upstream.TransportOptions{VerifyTLS: cfg.VerifyTLS})
	}
	rt := upstream.NewRetryTransport(upstream.Attempt(base, cfg.Timeout),
		upstream.RetryOptions{Policy: cfg.Retry.Or(defaultRetry), Unsafe: upstream.NotIdempotent, Name: "rancher", Logger: log})
	return &Client{base: strings.TrimRight(cfg.URL, "/"), token: cfg.Token, log: log,
		hc: &http.Client{Transport: rt, CheckRedirect: upstream.NoRedirect}}
}

// do sends one JSON request and decodes the answer into out (nil: discard). A 404 wraps
// failure.ErrNotFound; 5xx and 429 are transient.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token.Reveal())
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("rancher %s %s: %w", method, pathOnly(path), unwrapURL(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return failure.Transient(fmt.Errorf("rancher %s %s: read: %w", method, pathOnly(path), err))
	}
	if resp.StatusCode >= 300 {
		err := failure.StatusErr("rancher", method, pathOnly(path), resp.StatusCode, data)
		if resp.StatusCode == http.StatusNotFound {
			return fmt.Errorf("%w (%w)", err, failure.ErrNotFound)
		}
		return err
	}
	if out == nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("rancher %s %s: decode: %w", method, pathOnly(path), err)
	}
	return nil
}

func pathOnly(p string) string {
	path, _, _ := strings.Cut(p, "?")
	return path
}

// unwrapURL drops net/url's wrapper, whose message repeats the whole URL.
func unwrapURL(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// collection is a v3 list answer.
type collection[T any] struct {
	Data []T `json:"data"`
}

func query(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return "?" + v.Encode()
}
