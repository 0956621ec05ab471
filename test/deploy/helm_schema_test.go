package deploy

import (
	"strings"
	"testing"
)

// TestHelmValuesSchema: values.schema.json refuses a misspelt key, a wrong type or an
// out-of-range value before anything renders, naming the key; the defaults and the HA values
// pass.
func TestHelmValuesSchema(t *testing.T) {
	h := helm(t)
	for _, tc := range []struct {
		set, want string
	}{
		{"replicaCoutn=2", "Additional property replicaCoutn is not allowed"},
		{"metrics.port=70000", "metrics.port"},
		{"leaderElection.leaseDuration=15", "leaderElection.leaseDuration"},
		{"leaderElection.retryPeriod=soon", "leaderElection.retryPeriod"},
		{"mode=event_process", "mode"},
		{"image.pullPolicy=Sometimes", "image.pullPolicy"},
		{"healthCheck.periodSeconds=0", "healthCheck.periodSeconds"},
		{"healthCheck.type=tcp", "healthCheck.type"},
		{"secret.data.config\\.yml=x", "config.yml"},
	} {
		out, code := run(t, h, "template", "agent", chart, "--set", tc.set)
		if code == 0 || !strings.Contains(out, "schema") || !strings.Contains(out, tc.want) {
			t.Errorf("--set %s: exit %d, want a schema error naming %q:\n%s", tc.set, code, tc.want, out)
		}
	}
	render(t, "--set", "leaderElection.leaseDuration=1m30s", "--set", "replicaCount=0")
}
