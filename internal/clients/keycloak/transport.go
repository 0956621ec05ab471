package keycloak

import (
	"context"
	"io"
	"net/http"

	"github.com/go-resty/resty/v2"
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/upstream"
)

// maxCapture bounds how much of a response body is kept for error messages.
const maxCapture = 2048

// attemptClient is the client of one attempt: keep-alive, per-attempt timeout, no redirects
// (a redirect from an admin API is a configuration error worth seeing, and following it could
// forward the bearer token).
func attemptClient(cfg Config, o options) *http.Client {
	if o.httpClient != nil {
		hc := *o.httpClient
		if hc.Timeout == 0 {
			hc.Timeout = cfg.Timeout
		}
		hc.CheckRedirect = upstream.NoRedirect
		return &hc
	}
	return upstream.Attempt(upstream.Transport(upstream.TransportOptions{VerifyTLS: cfg.VerifyTLS}), cfg.Timeout)
}

// restyClient is the client gocloak uses: resty over a recorder over go-retryablehttp, so the
// retrying happens in one library and every call's outcome is recorded for classification.
// Every request may be repeated: groups have client-chosen names (a repeated create answers
// 409, which EnsureGroup resolves by looking the group up), memberships are PUT and DELETE.
func restyClient(inner *http.Client, o options, log *zap.Logger) *resty.Client {
	rt := upstream.NewRetryTransport(inner, upstream.RetryOptions{
		Policy: upstream.RetryPolicy{Max: o.retryMax, WaitMin: o.waitMin, WaitMax: o.waitMax}, Name: "keycloak", Logger: log})
	outer := &http.Client{Transport: recorder{next: rt}, CheckRedirect: upstream.NoRedirect}
	return resty.NewWithClient(outer).SetLogger(restyLogger{log})
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
