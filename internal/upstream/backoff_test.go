package upstream

import (
	"net/http"
	"testing"
	"time"
)

func TestBackoffBounds(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name         string
		lo, hi       time.Duration
		attempt      int
		wantLo, want time.Duration // every wait lies in [wantLo, want]
	}{
		{"first attempt", 100 * ms, 5 * time.Second, 0, 50 * ms, 100 * ms},
		{"third attempt doubles twice", 100 * ms, 5 * time.Second, 2, 200 * ms, 400 * ms},
		{"capped at hi", 100 * ms, time.Second, 10, 500 * ms, time.Second},
		{"huge attempt does not overflow", 100 * ms, time.Second, 1000, 500 * ms, time.Second},
		{"hi below lo", time.Second, 100 * ms, 0, 50 * ms, 100 * ms},
		{"zero", 0, 0, 3, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[time.Duration]bool{}
			for range 500 {
				d := Backoff(tc.lo, tc.hi, tc.attempt, nil)
				if d < tc.wantLo || d > tc.want {
					t.Fatalf("Backoff = %v, want within [%v, %v]", d, tc.wantLo, tc.want)
				}
				seen[d] = true
			}
			if tc.want > tc.wantLo && len(seen) < 2 {
				t.Errorf("500 waits were all %v: no jitter", tc.wantLo)
			}
		})
	}
}

func TestBackoffRetryAfter(t *testing.T) {
	resp := func(code int, after string) *http.Response {
		r := &http.Response{StatusCode: code, Header: http.Header{}}
		if after != "" {
			r.Header.Set("Retry-After", after)
		}
		return r
	}
	lo, hi := 10*time.Millisecond, 10*time.Second
	cases := []struct {
		name         string
		resp         *http.Response
		wantLo, want time.Duration
	}{
		{"429 seconds", resp(429, "3"), 3 * time.Second, 3 * time.Second},
		{"503 seconds", resp(503, "2"), 2 * time.Second, 2 * time.Second},
		{"zero means now", resp(429, "0"), 0, 0},
		{"capped at hi", resp(429, "3600"), hi, hi},
		{"absurdly large is capped", resp(429, "99999999999999999"), hi, hi},
		{"HTTP date", resp(503, time.Now().Add(5*time.Second).UTC().Format(http.TimeFormat)), 3 * time.Second, 5 * time.Second},
		{"HTTP date in the past", resp(503, "Mon, 02 Jan 2006 15:04:05 GMT"), 0, 0},
		{"ignored on 500", resp(500, "3"), lo / 2, lo},
		{"ignored on 502", resp(502, "3"), lo / 2, lo},
		{"negative ignored", resp(429, "-1"), lo / 2, lo},
		{"garbage ignored", resp(429, "soon"), lo / 2, lo},
		{"absent", resp(429, ""), lo / 2, lo},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if d := Backoff(lo, hi, 0, tc.resp); d < tc.wantLo || d > tc.want {
				t.Fatalf("Backoff = %v, want within [%v, %v]", d, tc.wantLo, tc.want)
			}
		})
	}
}

func TestRetryPolicyOr(t *testing.T) {
	def := RetryPolicy{Max: 4, WaitMin: time.Second, WaitMax: 8 * time.Second}
	cases := []struct {
		name string
		in   RetryPolicy
		want RetryPolicy
	}{
		{"zero takes defaults", RetryPolicy{}, def},
		{"set fields stay", RetryPolicy{Max: 2, WaitMin: time.Millisecond}, RetryPolicy{Max: 2, WaitMin: time.Millisecond, WaitMax: 8 * time.Second}},
		{"negative max means none", RetryPolicy{Max: -1}, RetryPolicy{Max: 0, WaitMin: time.Second, WaitMax: 8 * time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.in.Or(def); got != tc.want {
				t.Fatalf("Or = %+v, want %+v", got, tc.want)
			}
		})
	}
}
