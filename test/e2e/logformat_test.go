package e2e

import (
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// log_format: text writes zap's console lines (time, level, message, then the fields as JSON),
// the backend's lines with the order and resource among the fields; an unknown format stops the
// agent with exit code 2 naming the key.
func TestLogFormatText(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	o := e.world.CreateOrder("texty", map[string]float64{"cpu": 1})
	r := e.runEnv([]string{"SITE_AGENT_LOG_FORMAT=text"}, "-m", "order_process", "-c", e.config, "--once")
	if r.code != 0 {
		t.Fatalf("%s", r)
	}
	var changed string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if strings.HasPrefix(line, "{") || !strings.Contains(line, "\tINFO\t") && !strings.Contains(line, "\tWARN\t") {
			t.Fatalf("not a console line: %q", line)
		}
		if strings.Contains(line, "\tin-memory object changed\t") {
			changed = line
		}
	}
	if !strings.Contains(changed, `"order_uuid": "`+o.UUID+`"`) || !strings.Contains(changed, `"resource_uuid": "`) {
		t.Errorf("the backend's line does not name the order and resource: %q", changed)
	}
	r = e.runEnv([]string{"SITE_AGENT_LOG_FORMAT=xml"}, "-m", "order_process", "-c", e.config, "--once")
	if r.code != 2 || !strings.Contains(r.stderr, "log_format") {
		t.Fatalf("an unknown log format: %s", r)
	}
}
