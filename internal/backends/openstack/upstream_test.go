package openstack

import (
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/upstream"
)

// upstreams.openstack fills in what backend_settings (request_timeout, retries) and the
// options (backoff) leave unset; what they set wins.
func TestWithUpstream(t *testing.T) {
	two := 2
	ups := upstream.Upstreams{upstream.OpenStack: {Timeout: 7 * time.Second, Retries: &two, BackoffMin: time.Millisecond, BackoffMax: 9 * time.Millisecond}}
	def := httpOptions{Timeout: 60 * time.Second, Retries: 4}
	got := withUpstream(def, backends.Params{Settings: backends.Settings{}, Upstreams: ups})
	if got.Timeout != 7*time.Second || got.Retries != 2 || got.WaitMin != time.Millisecond || got.WaitMax != 9*time.Millisecond {
		t.Errorf("section only: %+v", got)
	}
	own := httpOptions{Timeout: 30 * time.Second, Retries: 0, WaitMin: time.Second}
	got = withUpstream(own, backends.Params{Settings: backends.Settings{"request_timeout": "30s", "retries": 0}, Upstreams: ups})
	if got.Timeout != 30*time.Second || got.Retries != 0 || got.WaitMin != time.Second || got.WaitMax != 9*time.Millisecond {
		t.Errorf("backend_settings and options win: %+v", got)
	}
	if got := withUpstream(def, backends.Params{}); got.Timeout != def.Timeout || got.Retries != def.Retries || got.WaitMin != 0 {
		t.Errorf("no section: %+v", got)
	}
}
