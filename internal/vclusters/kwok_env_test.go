package vclusters

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/testenv/kubeenv"
	"github.com/waldur/site-agent/internal/vclusters/kwok"
)

// The tier-2 tests that share kubeenv's API server share one KWOK too (their tools run with
// kwok.mode external), as a kwokctl cluster would provide it; the program's own KWOK is tested
// in start mode (startmode_test.go).

// testLease is the Lease duration of the tests' KWOKs: renewed every second.
const testLease = 4 * time.Second

var sharedKwok struct {
	once sync.Once
	c    *kwok.Controller
	dir  string
	err  error
}

// kwokBinary is KWOK built by scripts/kwok/build.sh (or $SITE_AGENT_KWOK_BIN).
func kwokBinary(t testing.TB) string {
	t.Helper()
	path := os.Getenv("SITE_AGENT_KWOK_BIN")
	if path == "" {
		home, _ := os.UserHomeDir()
		path = filepath.Join(home, ".cache", "site-agent", "kwok", "v0.8.0", "kwok")
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm()&0o111 == 0 {
		t.Fatalf("kwok not found at %s: build it with scripts/kwok/build.sh (or set SITE_AGENT_KWOK_BIN)", path)
	}
	return path
}

// useSharedKwok starts the KWOK of the shared API server once.
func useSharedKwok(t testing.TB, env *kubeenv.Env) {
	t.Helper()
	bin := kwokBinary(t)
	sharedKwok.once.Do(func() {
		sharedKwok.dir, sharedKwok.err = os.MkdirTemp("", "vclusters-kwok-")
		if sharedKwok.err != nil {
			return
		}
		sharedKwok.c, sharedKwok.err = kwok.Start(kwok.Options{Binary: bin, Dir: sharedKwok.dir, Main: env.Config,
			NodeLeaseDuration: testLease, PodCIDR: "10.64.0.1/10", Stages: kwok.FastStages(), Logger: zap.NewNop()})
	})
	if sharedKwok.err != nil {
		t.Fatalf("shared kwok: %v", sharedKwok.err)
	}
	if err := sharedKwok.c.Exited(); err != nil {
		t.Fatalf("shared kwok: %v (log: %s)", err, filepath.Join(sharedKwok.dir, "kwok.log"))
	}
}

func stopSharedKwok() {
	if sharedKwok.c != nil {
		sharedKwok.c.Stop()
	}
	if sharedKwok.dir != "" && os.Getenv("SITE_AGENT_KEEP_KWOK") == "" {
		_ = os.RemoveAll(sharedKwok.dir)
	}
}
