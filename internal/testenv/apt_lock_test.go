//go:build linux

package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// aptRoot is a private apt and dpkg state (lists, archives, status, no sources) so that the
// tests can hold their locks without touching the machine's package manager.
type aptRoot struct {
	dir, conf, lists, dpkg string
}

func newAptRoot(t *testing.T) aptRoot {
	t.Helper()
	for _, bin := range []string{"bash", "apt-get", "dpkg"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (Debian machines and CI have it): %v", bin, err)
		}
	}
	d := t.TempDir()
	r := aptRoot{dir: d, conf: filepath.Join(d, "apt.conf"), lists: filepath.Join(d, "state", "lists"), dpkg: filepath.Join(d, "dpkg")}
	for _, sub := range []string{"state/lists/partial", "cache/archives/partial", "dpkg/updates", "dpkg/info", "parts", "log"} {
		if err := os.MkdirAll(filepath.Join(d, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"sources.list", "dpkg/status", "dpkg/available"} {
		if err := os.WriteFile(filepath.Join(d, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	conf := strings.NewReplacer("DIR", d).Replace(`Dir::State "DIR/state";
Dir::State::status "DIR/dpkg/status";
Dir::Cache "DIR/cache";
Dir::Log "DIR/log";
Dir::Etc::SourceList "DIR/sources.list";
Dir::Etc::SourceParts "DIR/parts";
Dir::Etc::Parts "DIR/parts";
DPkg::Options { "--admindir=DIR/dpkg"; };
`)
	if err := os.WriteFile(r.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return r
}

// hold takes the fcntl write lock apt and dpkg use on path and releases it after d.
func hold(t *testing.T, path string, d time.Duration) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &syscall.Flock_t{Type: syscall.F_WRLCK}); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(d, func() { f.Close() })
	t.Cleanup(func() {
		if timer.Stop() {
			f.Close()
		}
	})
}

// run runs a bash snippet with scripts/lib/apt.sh sourced and the private apt state.
func (r aptRoot) run(t *testing.T, timeout, snippet string) (string, error, time.Duration) {
	t.Helper()
	lib, err := filepath.Abs("../../scripts/lib/apt.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", "set -euo pipefail; . "+lib+"; "+snippet)
	cmd.Env = append(os.Environ(), "APT_CONFIG="+r.conf, "DPKG_ADMINDIR="+r.dpkg, "DEBIAN_FRONTEND=noninteractive",
		"SITE_AGENT_APT_LOCK_TIMEOUT="+timeout, "SITE_AGENT_APT_LOCK_POLL=0.2")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	return out.String(), err, time.Since(start)
}

const lockHeld = 1500 * time.Millisecond

// apt-get update takes the package lists lock, on which apt-get does not wait even with
// DPkg::Lock::Timeout (what scripts/openstack/up.sh used to pass): it failed at once while
// another apt ran. apt_get waits for the lock.
func TestAptGetWaitsForTheListsLock(t *testing.T) {
	r := newAptRoot(t)
	hold(t, filepath.Join(r.lists, "lock"), lockHeld)
	out, err, _ := r.run(t, "60", "apt-get -q -o DPkg::Lock::Timeout=60 update")
	if err == nil || !strings.Contains(out, "Could not get lock") {
		t.Fatalf("plain apt-get update with the lists lock held: %v\n%s\n(apt now waits by itself? then apt_get is moot)", err, out)
	}
	out, err, took := r.run(t, "60", "apt_get -q update")
	if err != nil {
		t.Fatalf("apt_get update: %v\n%s", err, out)
	}
	if took < lockHeld/2 || !strings.Contains(out, "waiting up to 60s") {
		t.Errorf("apt_get update took %s and said:\n%s\nwant it to have waited for the lock", took, out)
	}
}

// apt-get install without DPkg::Lock::Timeout (scripts/kube/build.sh's etcd install) failed at
// once on the dpkg frontend lock.
func TestAptGetInstallWaitsForTheFrontendLock(t *testing.T) {
	r := newAptRoot(t)
	hold(t, filepath.Join(r.dpkg, "lock-frontend"), 30*time.Second)
	if out, err, _ := r.run(t, "60", "apt-get -q -y install"); err == nil || !strings.Contains(out, "dpkg frontend lock") {
		t.Fatalf("plain apt-get install with the frontend lock held: %v\n%s", err, out)
	}
	r2 := newAptRoot(t)
	hold(t, filepath.Join(r2.dpkg, "lock-frontend"), lockHeld)
	out, err, took := r2.run(t, "60", "apt_get -q -y install")
	if err != nil || took < lockHeld/2 {
		t.Fatalf("apt_get install: %v after %s\n%s", err, took, out)
	}
}

// dpkg has no lock wait at all: dpkg_configure_pending waits for the database lock.
func TestDpkgConfigureWaitsForTheDatabaseLock(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("dpkg --configure needs root (CI and the tier-2 scripts run as root)")
	}
	r := newAptRoot(t)
	hold(t, filepath.Join(r.dpkg, "lock"), lockHeld)
	out, err, took := r.run(t, "60", "dpkg_configure_pending")
	if err != nil || took < lockHeld/2 {
		t.Fatalf("dpkg_configure_pending: %v after %s\n%s", err, took, out)
	}
}

// The wait is bounded: a lock held for longer than SITE_AGENT_APT_LOCK_TIMEOUT fails the call
// with a message naming the setting.
func TestAptLockWaitIsBounded(t *testing.T) {
	r := newAptRoot(t)
	hold(t, filepath.Join(r.lists, "lock"), 60*time.Second)
	out, err, took := r.run(t, "1", "apt_get -q update")
	if err == nil || !strings.Contains(out, "gave up after 1s") || !strings.Contains(out, "SITE_AGENT_APT_LOCK_TIMEOUT") {
		t.Fatalf("want a failure naming the timeout, got %v\n%s", err, out)
	}
	if took > 30*time.Second {
		t.Errorf("gave up only after %s", took)
	}
}

// Every apt-get and dpkg call of the project's scripts goes through scripts/lib/apt.sh.
func TestScriptsRunAptOnlyThroughTheLockWait(t *testing.T) {
	direct := regexp.MustCompile(`(^|[;&|({]|\bif|\bthen|\bdo|!)\s*(apt-get|apt|dpkg)\s`)
	var files []string
	for _, pattern := range []string{"../../scripts/*.sh", "../../scripts/*/*.sh", "../../.ci/run"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	if len(files) < 5 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "lib/apt.sh") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if code, _, _ := strings.Cut(line, "#"); direct.MatchString(code) {
				t.Errorf("%s:%d runs apt or dpkg directly (use apt_get / dpkg_configure_pending from scripts/lib/apt.sh): %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
