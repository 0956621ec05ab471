package kubeenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recordingTB captures Skipf/Fatalf instead of stopping the goroutine, to test the skip policy.
type recordingTB struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Skipf(format string, args ...any) {
	r.skipped, r.msg = true, fmt.Sprintf(format, args...)
}
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
}

func writeExecutable(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestStartWithoutBinaries(t *testing.T) {
	onlyKube := t.TempDir()
	writeExecutable(t, filepath.Join(onlyKube, "kube-apiserver"))
	writeExecutable(t, filepath.Join(onlyKube, "kube-controller-manager"))
	tests := []struct {
		name, binDir, requireReal string
		wantSkip, wantFail        bool
		wantMsg                   string
	}{
		{name: "skips when binaries are absent", binDir: t.TempDir(), wantSkip: true, wantMsg: "scripts/kube/build.sh"},
		{name: "fails when real servers are required", binDir: t.TempDir(), requireReal: "1", wantFail: true, wantMsg: EnvRequireReal},
		{name: "skips when etcd is absent", binDir: onlyKube, wantSkip: true, wantMsg: "etcd-server"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvBinDir, tc.binDir)
			t.Setenv(EnvRequireReal, tc.requireReal)
			t.Setenv("PATH", t.TempDir())
			rec := &recordingTB{TB: t}
			if env := Start(rec); env != nil {
				t.Fatalf("Start returned an Env without binaries")
			}
			if rec.skipped != tc.wantSkip || rec.failed != tc.wantFail {
				t.Fatalf("skipped=%v failed=%v, want %v/%v (%s)", rec.skipped, rec.failed, tc.wantSkip, tc.wantFail, rec.msg)
			}
			if !strings.Contains(rec.msg, tc.wantMsg) {
				t.Errorf("message %q does not mention %q", rec.msg, tc.wantMsg)
			}
		})
	}
}

func TestBinDir(t *testing.T) {
	full := t.TempDir()
	writeExecutable(t, filepath.Join(full, "kube-apiserver"))
	writeExecutable(t, filepath.Join(full, "kube-controller-manager"))
	cache := t.TempDir()
	tests := []struct {
		name, bin, cache, wantDir string
		wantOK                    bool
	}{
		{name: "override with both binaries", bin: full, wantDir: full, wantOK: true},
		{name: "override without binaries", bin: cache, wantDir: cache},
		{name: "cache root", cache: cache, wantDir: filepath.Join(cache, "kube", KubeVersion)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvBinDir, tc.bin)
			t.Setenv(EnvCache, tc.cache)
			dir, ok := BinDir()
			if dir != tc.wantDir || ok != tc.wantOK {
				t.Errorf("BinDir() = %q, %v; want %q, %v", dir, ok, tc.wantDir, tc.wantOK)
			}
		})
	}
}

func TestOwnerPID(t *testing.T) {
	tests := []struct {
		name    string
		wantPID int
		wantOK  bool
	}{
		{"kubeenv-123-abc", 123, true},
		{"kubeenv-abc-123", 0, false},
		{"kubeenv-123", 0, false},
		{"other-123-abc", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pid, ok := ownerPID(tc.name)
			if pid != tc.wantPID || ok != tc.wantOK {
				t.Errorf("ownerPID(%q) = %d, %v; want %d, %v", tc.name, pid, ok, tc.wantPID, tc.wantOK)
			}
		})
	}
}
