package kubeenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// KubeVersion is the Kubernetes release scripts/kube/build.sh builds and BinDir looks for.
const KubeVersion = "v1.36.3"

// Environment variables understood by the package.
const (
	// EnvBinDir overrides the directory holding kube-apiserver and kube-controller-manager
	// (and optionally etcd).
	EnvBinDir = "SITE_AGENT_KUBE_BIN"
	// EnvCache is the cache root used by scripts/kube/build.sh (default $HOME/.cache/site-agent).
	EnvCache = "SITE_AGENT_CACHE"
	// EnvRequireReal turns "binaries absent" from a skip into a test failure when set to "1".
	EnvRequireReal = "SITE_AGENT_REQUIRE_REAL"
)

// startTimeout bounds one cold start (all attempts) of the three processes.
const startTimeout = 90 * time.Second

// Env is a running control plane. Config and Clientset authenticate as a cluster admin
// (group system:masters) with Token over TLS verified against CAData. Treat Config as
// read-only; use rest.CopyConfig to derive a modified one.
type Env struct {
	Host      string // https://127.0.0.1:<port>
	Token     string // static bearer token of the admin user
	CAData    []byte // PEM of the CA that signed the apiserver's serving certificate
	Config    *rest.Config
	Clientset *kubernetes.Clientset
	// Dir holds the certificates and the logs: etcd.log, kube-apiserver.log,
	// kube-controller-manager.log. It is removed when the Env stops.
	Dir string
	// StartupTime is how long the successful start took, from launching etcd until /readyz
	// answered 200 and the "default" ServiceAccount existed.
	StartupTime time.Duration

	cluster *cluster
}

// Logs returns the last lines of each process's log, for failure messages.
func (e *Env) Logs() string { return e.cluster.tails() }

// binaries are the absolute paths of the executables a start needs.
type binaries struct {
	apiserver, controllerManager, etcd string
}

// BinDir reports where the cached kube-apiserver and kube-controller-manager are expected:
// $SITE_AGENT_KUBE_BIN if set, else ${SITE_AGENT_CACHE:-$HOME/.cache/site-agent}/kube/<KubeVersion>.
// The bool is true when both binaries are present and executable there.
func BinDir() (string, bool) {
	dir := os.Getenv(EnvBinDir)
	if dir == "" {
		cache := os.Getenv(EnvCache)
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", false
			}
			cache = filepath.Join(home, ".cache", "site-agent")
		}
		dir = filepath.Join(cache, "kube", KubeVersion)
	}
	return dir, isExecutable(filepath.Join(dir, "kube-apiserver")) &&
		isExecutable(filepath.Join(dir, "kube-controller-manager"))
}

// findBinaries locates the three executables; etcd is taken from the binary directory if
// present there, else from PATH (Debian's etcd-server installs /usr/bin/etcd).
func findBinaries() (binaries, error) {
	if errPlatform != nil {
		return binaries{}, errPlatform
	}
	dir, ok := BinDir()
	if !ok {
		return binaries{}, fmt.Errorf("kube-apiserver/kube-controller-manager %s not found in %s "+
			"(build them with scripts/kube/build.sh or point %s at them)", KubeVersion, dir, EnvBinDir)
	}
	b := binaries{
		apiserver:         filepath.Join(dir, "kube-apiserver"),
		controllerManager: filepath.Join(dir, "kube-controller-manager"),
		etcd:              filepath.Join(dir, "etcd"),
	}
	if !isExecutable(b.etcd) {
		path, err := exec.LookPath("etcd")
		if err != nil {
			return binaries{}, fmt.Errorf("etcd not found in %s or PATH "+
				"(apt-get install -y --no-install-recommends etcd-server)", dir)
		}
		b.etcd = path
	}
	return b, nil
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// skipOrFail skips the test because the real servers are unavailable, or fails it when
// SITE_AGENT_REQUIRE_REAL=1. Callers must return right after it (a fake TB may not stop them).
func skipOrFail(t testing.TB, err error) {
	t.Helper()
	if os.Getenv(EnvRequireReal) == "1" {
		t.Fatalf("kubeenv: %v (%s=1 requires the real servers)", err, EnvRequireReal)
		return
	}
	t.Skipf("kubeenv: skipping, real Kubernetes API server unavailable: %v", err)
}

// newStartContext bounds one cold start.
func newStartContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), startTimeout)
}
