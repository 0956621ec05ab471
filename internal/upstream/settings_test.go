package upstream

import (
	"testing"
	"time"
)

func TestSettingsOverDefaults(t *testing.T) {
	def := RetryPolicy{Max: 6, WaitMin: 200 * time.Millisecond, WaitMax: 5 * time.Second}
	zero, two := 0, 2
	cases := []struct {
		name string
		in   Settings
		want RetryPolicy
	}{
		{"nothing set keeps the defaults", Settings{}, def},
		{"retries 0 means none", Settings{Retries: &zero}, RetryPolicy{Max: 0, WaitMin: def.WaitMin, WaitMax: def.WaitMax}},
		{"every field", Settings{Retries: &two, BackoffMin: time.Millisecond, BackoffMax: time.Second},
			RetryPolicy{Max: 2, WaitMin: time.Millisecond, WaitMax: time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.in.RetryPolicy().Or(def); got != tc.want {
				t.Fatalf("policy %+v, want %+v", got, tc.want)
			}
		})
	}
	if got := (Settings{}).TimeoutOr(time.Minute); got != time.Minute {
		t.Errorf("TimeoutOr without a timeout = %v", got)
	}
	if got := (Settings{Timeout: time.Second}).TimeoutOr(time.Minute); got != time.Second {
		t.Errorf("TimeoutOr = %v", got)
	}
	if got := (Settings{Retries: &zero}).RetriesOr(4); got != 0 {
		t.Errorf("RetriesOr with retries 0 = %d", got)
	}
	if got := Upstreams(nil).Get(Waldur); got != (Settings{}) {
		t.Errorf("nil Upstreams.Get = %+v", got)
	}
}
