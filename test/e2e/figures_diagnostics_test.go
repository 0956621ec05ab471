package e2e

import (
	"fmt"
	"os/exec"
	"sort"
	"testing"
	"time"
)

// figureDiagnostics times `diagnostics` with six offerings (five Rancher + Keycloak, one
// OpenStack) whose every upstream refuses connections, and again with every upstream hanging
// under --timeout 2s: the medians of five runs of the release binary. The targets are
// ≤ 2 s and ≤ the deadline + 1 s; the e2e tests check only bounds that tell concurrent,
// deadline-bound checks from serial or retried ones, which a loaded machine cannot blur.
func figureDiagnostics(b *testing.B, bin string, t *table) {
	const n = 5
	down := refusedURL(b)
	hang := hangingURL(b)
	for _, c := range []struct {
		name, target string
		cfg          string
		args         []string
	}{
		{"diagnostics, 6 offerings, every upstream refusing", "≤ 2 s", diagConfig(b, n, down, down, down), nil},
		{"diagnostics, 6 offerings, every upstream hanging, --timeout 2s", "≤ 3 s", diagConfig(b, n, hang, hang, hang), []string{"--timeout", "2s"}},
	} {
		var took []time.Duration
		for i := 0; i < 5; i++ {
			start := time.Now()
			cmd := exec.Command(bin, append([]string{"diagnostics", "-c", c.cfg}, c.args...)...)
			_ = cmd.Run() // exit 1: problems found
			took = append(took, time.Since(start))
		}
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		t.add(c.name, fmt.Sprintf("%s median (min %s, max %s)", took[2].Round(time.Millisecond),
			took[0].Round(time.Millisecond), took[4].Round(time.Millisecond)), c.target)
		t.metric(took[2].Seconds(), "s/diagnostics")
	}
}
