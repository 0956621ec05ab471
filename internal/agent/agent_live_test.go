package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/telemetry"
)

// Liveness follows the heartbeat interval, not the modes' periods: an agent whose ticker has
// missed three beats is wedged even if its longest period is an hour.
func TestLiveFollowsHeartbeatInterval(t *testing.T) {
	for _, tc := range []struct {
		interval, age time.Duration
		wantErr       bool
	}{
		{30 * time.Second, 20 * time.Second, false},
		{30 * time.Second, 59 * time.Second, false}, // the one-minute floor
		{30 * time.Second, 2 * time.Minute, true},
		{5 * time.Minute, 14 * time.Minute, false},
		{5 * time.Minute, 16 * time.Minute, true},
	} {
		beatAt := time.Now().Add(-tc.age)
		hb := telemetry.NewHeartbeatClock("", func() time.Time { return beatAt })
		hb.Beat()
		a := &Agent{cfg: &config.Config{HeartbeatInterval: tc.interval}, hb: hb}
		err := a.live()
		if (err != nil) != tc.wantErr {
			t.Errorf("interval %s, last beat %s ago: live() = %v, want error %v", tc.interval, tc.age, err, tc.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "no heartbeat") {
			t.Errorf("error %q does not say what is missing", err)
		}
	}
	fresh := &Agent{cfg: &config.Config{HeartbeatInterval: time.Second}, hb: telemetry.NewHeartbeat("")}
	if err := fresh.live(); err != nil {
		t.Errorf("before the first beat: %v", err)
	}
}
