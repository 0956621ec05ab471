package upstream

import (
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy bounds the retries of one request.
type RetryPolicy struct {
	Max     int           // retries after the first attempt; negative means none
	WaitMin time.Duration // first backoff
	WaitMax time.Duration // backoff cap
}

// Or fills the zero fields of p from def (a client's defaults) and turns a negative Max into
// zero.
func (p RetryPolicy) Or(def RetryPolicy) RetryPolicy {
	if p.Max == 0 {
		p.Max = def.Max
	}
	p.Max = max(p.Max, 0)
	if p.WaitMin <= 0 {
		p.WaitMin = def.WaitMin
	}
	if p.WaitMax <= 0 {
		p.WaitMax = def.WaitMax
	}
	return p
}

// Backoff is a go-retryablehttp Backoff: exponential from lo, doubling per attempt and capped
// at hi, of which half is fixed and half random, so that agents failing together do not retry
// together. On 429 and 503 a Retry-After header (seconds or an HTTP date) replaces it, capped
// at hi: a server asking for an hour must not stall a pass for an hour.
func Backoff(lo, hi time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if d, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			return min(d, hi)
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

// retryAfter parses a Retry-After value: delay-seconds or an HTTP date (a date in the past
// means now).
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(math.MaxInt64/time.Second) {
			return math.MaxInt64, true // the caller caps it
		}
		return time.Duration(secs) * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(at.Sub(now), 0), true
}
