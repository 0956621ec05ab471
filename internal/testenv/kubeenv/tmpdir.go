package kubeenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// shmDir is preferred for etcd's data: tmpfs makes its fsyncs free.
const shmDir = "/dev/shm"

// tempPrefix names the directories this process creates, so later runs can tell whose they are.
func tempPrefix() string { return "kubeenv-" + strconv.Itoa(os.Getpid()) + "-" }

// tempBases are the parent directories tried in order.
func tempBases() []string { return []string{shmDir, os.TempDir()} }

// makeTempDir creates a private directory in tmpfs if possible, else in os.TempDir().
func makeTempDir() (string, error) {
	var firstErr error
	for _, base := range tempBases() {
		dir, err := os.MkdirTemp(base, tempPrefix())
		if err == nil {
			return dir, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return "", fmt.Errorf("create a temporary directory: %w", firstErr)
}

var sweepOnce sync.Once

// sweepStaleDirs removes directories left by test processes that died without cleanup (a panic
// skips TestMain's teardown). Directories of live processes are left alone.
func sweepStaleDirs() {
	sweepOnce.Do(func() {
		for _, base := range tempBases() {
			matches, _ := filepath.Glob(filepath.Join(base, "kubeenv-*-*"))
			for _, m := range matches {
				if pid, ok := ownerPID(filepath.Base(m)); ok && pid != os.Getpid() && !processAlive(pid) {
					_ = os.RemoveAll(m)
				}
			}
		}
	})
}

// ownerPID parses "kubeenv-<pid>-<random>".
func ownerPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "kubeenv-")
	if !ok {
		return 0, false
	}
	pidText, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(pidText)
	return pid, err == nil && pid > 0
}
