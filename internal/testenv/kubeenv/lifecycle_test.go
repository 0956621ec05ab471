//go:build linux

package kubeenv

import (
	"os"
	"testing"
	"time"
)

// TestStartServesAndCleansUp starts a private control plane in a subtest, checks it reports the
// stamped version (proving the build's ldflags), and checks that once the subtest's cleanup ran
// no process is left and the tmpfs data is gone.
func TestStartServesAndCleansUp(t *testing.T) {
	var (
		pids  []int
		owned []string
	)
	t.Run("start", func(t *testing.T) {
		began := time.Now()
		env := Start(t)
		t.Logf("private control plane: ready in %v (Start returned after %v), RSS %v, logs in %s",
			env.StartupTime.Round(time.Millisecond), time.Since(began).Round(time.Millisecond),
			env.RSS(), env.Dir)
		t.Logf("start phases: %v", env.cluster.cp.Phases)
		v, err := env.Clientset.Discovery().ServerVersion()
		if err != nil {
			t.Fatalf("server version: %v", err)
		}
		if v.GitVersion != KubeVersion {
			t.Errorf("server gitVersion = %q, want %q", v.GitVersion, KubeVersion)
		}
		for _, p := range env.cluster.cp.Processes() {
			pids = append(pids, p.Pid())
		}
		owned = env.cluster.owned
		if len(pids) != 3 || len(owned) == 0 {
			t.Fatalf("want 3 processes and an owned data dir, got pids %v, owned %v", pids, owned)
		}
	})
	if len(pids) == 0 {
		t.Skip("control plane did not start (see the subtest)")
	}
	for _, pid := range pids {
		if processAlive(pid) {
			t.Errorf("process %d still alive after cleanup", pid)
		}
	}
	for _, d := range owned {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s still exists after cleanup (stat err %v)", d, err)
		}
	}
}
