package keycloak

import (
	"context"
	"crypto/tls"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/go-resty/resty/v2"
	"github.com/hashicorp/go-retryablehttp"
	"go.uber.org/zap"
)

// maxCapture bounds how much of a response body is kept for error messages.
const maxCapture = 2048

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// attemptClient is the client of one attempt: keep-alive, per-attempt timeout, no redirects
// (a redirect from an admin API is a configuration error worth seeing, and following it could
// forward the bearer token).
func attemptClient(cfg Config, o options) *http.Client {
	if o.httpClient != nil {
		hc := *o.httpClient
		if hc.Timeout == 0 {
			hc.Timeout = cfg.Timeout
		}
		hc.CheckRedirect = noRedirect
		return &hc
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: !cfg.VerifyTLS}, //nolint:gosec // keycloak_ssl_verify: false is an explicit operator choice
	}
	return &http.Client{Transport: tr, Timeout: cfg.Timeout, CheckRedirect: noRedirect}
}

// restyClient is the client gocloak uses: resty over a recorder over go-retryablehttp, so the
// retrying happens in one library and every call's outcome is recorded for classification.
func restyClient(inner *http.Client, o options, log *zap.Logger) *resty.Client {
	rc := &retryablehttp.Client{
		HTTPClient:   inner,
		RetryWaitMin: o.waitMin,
		RetryWaitMax: o.waitMax,
		RetryMax:     o.retryMax,
		CheckRetry:   retryablehttp.DefaultRetryPolicy,
		Backoff:      jitterBackoff,
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
		RequestLogHook: func(_ retryablehttp.Logger, r *http.Request, attempt int) {
			if attempt > 0 {
				log.Debug("retrying keycloak request", zap.String("method", r.Method), zap.String("path", r.URL.Path), zap.Int("attempt", attempt))
			}
		},
	}
	outer := &http.Client{Transport: recorder{next: &retryablehttp.RoundTripper{Client: rc}}, CheckRedirect: noRedirect}
	return resty.NewWithClient(outer).SetLogger(restyLogger{log})
}

// jitterBackoff is exponential backoff with jitter (half fixed, half random) that honours a
// Retry-After header in seconds on 429 and 503, capped at hi.
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

// callInfo is what the recorder saw of the final attempt of one call.
type callInfo struct {
	method   string
	path     string
	status   int // 0 when no response arrived
	location string
	body     []byte
	err      error
}

type callKey struct{}

func withCallInfo(ctx context.Context) (context.Context, *callInfo) {
	info := &callInfo{}
	return context.WithValue(ctx, callKey{}, info), info
}

// recorder notes the outcome of each call whose context carries a callInfo. It sits outside
// the retrying transport, so it sees the final attempt only.
type recorder struct{ next http.RoundTripper }

func (r recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	info, _ := req.Context().Value(callKey{}).(*callInfo)
	if info == nil {
		return resp, err
	}
	info.method, info.path = req.Method, req.URL.Path
	if err != nil {
		info.err = err
		return resp, err
	}
	info.status = resp.StatusCode
	info.location = resp.Header.Get("Location")
	resp.Body = &capture{ReadCloser: resp.Body, info: info}
	return resp, nil
}

// capture keeps the first maxCapture bytes of a body as it is read.
type capture struct {
	io.ReadCloser
	info *callInfo
}

func (c *capture) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	if room := maxCapture - len(c.info.body); room > 0 && n > 0 {
		c.info.body = append(c.info.body, p[:min(n, room)]...)
	}
	return n, err
}

// restyLogger sends resty's own messages to zap at debug level (warnings at warn).
type restyLogger struct{ log *zap.Logger }

func (l restyLogger) Errorf(format string, v ...any) { l.log.Sugar().Debugf("resty: "+format, v...) }
func (l restyLogger) Warnf(format string, v ...any)  { l.log.Sugar().Warnf("resty: "+format, v...) }
func (l restyLogger) Debugf(format string, v ...any) { l.log.Sugar().Debugf("resty: "+format, v...) }
