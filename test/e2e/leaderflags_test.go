package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// TestLeaderElectionBadSettings: leader election problems are configuration errors naming the
// key, exit code 2, before any request to Waldur or Kubernetes.
func TestLeaderElectionBadSettings(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	missing := filepath.Join(e.dir, "no-such-kubeconfig")
	garbage := filepath.Join(e.dir, "garbage-kubeconfig")
	if err := os.WriteFile(garbage, []byte("clusters: [oops"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"outside a pod without namespace", []string{"--leader-elect"}, "leader_election.namespace"},
		{"outside a pod without kubeconfig", []string{"--leader-elect", "--leader-elect-resource-namespace", "ns"}, "leader_election.kubeconfig: not running in a Kubernetes pod"},
		{"kubeconfig missing", []string{"--leader-elect", "--leader-elect-resource-namespace", "ns", "--kubeconfig", missing}, "leader_election.kubeconfig"},
		{"kubeconfig garbage", []string{"--leader-elect", "--leader-elect-resource-namespace", "ns", "--kubeconfig", garbage}, "leader_election.kubeconfig"},
		{"lease shorter than renew deadline", []string{"--leader-elect", "--leader-elect-lease-duration", "5s"}, "leader_election.lease_duration"},
		{"bad lease name", []string{"--leader-elect", "--leader-elect-resource-name", "Agent!"}, "leader_election.lease_name"},
		{"once", []string{"--leader-elect", "--once"}, "--once cannot be combined with leader election"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.run(append([]string{"-m", "all", "-c", e.config}, c.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("want exit 2 mentioning %q, got %s", c.want, r)
			}
		})
	}
	if n := e.sim.TotalCalls(); n != 0 {
		t.Fatalf("%d Waldur requests before the configuration was refused", n)
	}
}
