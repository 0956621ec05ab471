package kubeenv

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/waldur/site-agent/internal/testenv"
)

// Start launches etcd, kube-apiserver and kube-controller-manager on free loopback ports, with
// certificates and logs in t.TempDir() and etcd's data in tmpfs (/dev/shm) when available. It
// returns once /readyz answers 200 and the serviceaccount controller has created the "default"
// ServiceAccount; everything is stopped in t.Cleanup. When the binaries are absent it calls
// t.Skip, or t.Fatal if SITE_AGENT_REQUIRE_REAL=1. On a failed start the tail of each process's
// log is part of the failure message; after a failed test the tails are logged at cleanup.
func Start(t testing.TB) *Env {
	t.Helper()
	if err := testenv.Gate(); err != nil {
		t.Skip("kubeenv: " + err.Error())
		return nil
	}
	bins, err := findBinaries()
	if err != nil {
		skipOrFail(t, err)
		return nil
	}
	dir := t.TempDir()
	ctx, cancel := newStartContext()
	defer cancel()
	c, err := launch(ctx, bins, dir)
	if err != nil {
		t.Fatalf("kubeenv: %v", err)
		return nil
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kubeenv: control plane logs (test failed):\n%s", c.tails())
		}
		c.stop()
	})
	return c.env
}

// shared is the package-level control plane behind Shared, stopped by Main.
var shared struct {
	once sync.Once
	c    *cluster
	err  error
}

// mainActive records that TestMain runs through Main, so the shared instance will be stopped.
var mainActive atomic.Bool

// Main runs the tests of a package that uses Shared and stops the shared control plane
// afterwards. Use it as:
//
//	func TestMain(m *testing.M) { os.Exit(kubeenv.Main(m)) }
//
// If a test panics the process dies without running this; the servers then get the parent-death
// signal and their tmpfs data is swept by the next start.
func Main(m *testing.M) int {
	mainActive.Store(true)
	defer stopShared()
	return m.Run()
}

// Shared returns the control plane shared by all tests of the test binary, starting it on first
// use (cold start cost is paid once). Tests must isolate themselves, e.g. with Env.Namespace.
// It skips or fails like Start, and fails if TestMain does not call Main. A failed start is
// reported to every caller without being retried.
func Shared(t testing.TB) *Env {
	t.Helper()
	if !mainActive.Load() {
		t.Fatalf("kubeenv: Shared needs TestMain to call kubeenv.Main(m) so the servers are stopped")
		return nil
	}
	if err := testenv.Gate(); err != nil {
		t.Skip("kubeenv: " + err.Error())
		return nil
	}
	bins, err := findBinaries()
	if err != nil {
		skipOrFail(t, err)
		return nil
	}
	shared.once.Do(func() {
		ctx, cancel := newStartContext()
		defer cancel()
		shared.c, shared.err = launch(ctx, bins, "")
	})
	if shared.err != nil {
		t.Fatalf("kubeenv: shared control plane: %v", shared.err)
		return nil
	}
	return shared.c.env
}

func stopShared() {
	if shared.c != nil {
		shared.c.stop()
	}
}
