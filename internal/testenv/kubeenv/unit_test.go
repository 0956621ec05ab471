package kubeenv

import (
	"crypto/x509"
	"encoding/pem"
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

func TestCredentials(t *testing.T) {
	c, err := newCredentials()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f, err := c.write(dir, "https://127.0.0.1:6443")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(c.caPEM) {
		t.Fatal("CA PEM does not parse")
	}
	block, _ := pem.Decode(c.certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"127.0.0.1", "localhost"} {
		opts := x509.VerifyOptions{Roots: pool, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		if _, err := cert.Verify(opts); err != nil {
			t.Errorf("serving cert does not verify for %s: %v", name, err)
		}
	}
	tokens, err := os.ReadFile(f.tokens)
	if err != nil {
		t.Fatal(err)
	}
	if want := c.token + `,admin,admin,"system:masters"` + "\n"; string(tokens) != want {
		t.Errorf("tokens.csv = %q, want %q", tokens, want)
	}
	kubeconfig, err := os.ReadFile(f.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"server: https://127.0.0.1:6443", "token: " + c.token} {
		if !strings.Contains(string(kubeconfig), want) {
			t.Errorf("kubeconfig lacks %q:\n%s", want, kubeconfig)
		}
	}
	if other, _ := newCredentials(); other != nil && other.token == c.token {
		t.Error("two credential sets share a token")
	}
}

func TestFreePortsDistinct(t *testing.T) {
	ports, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 3 || ports[0] == ports[1] || ports[1] == ports[2] || ports[0] == ports[2] {
		t.Errorf("freePorts(3) = %v, want 3 distinct ports", ports)
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

func TestTailFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := tailFile(path, 3), "line 97\nline 98\nline 99"; got != want {
		t.Errorf("tailFile = %q, want %q", got, want)
	}
	if got := tailFile(filepath.Join(t.TempDir(), "missing"), 3); !strings.Contains(got, "cannot read") {
		t.Errorf("tailFile(missing) = %q", got)
	}
}

func TestPortClashDetected(t *testing.T) {
	tests := []struct {
		name, log string
		want      bool
	}{
		{"etcd bind failure", `{"level":"fatal","msg":"listen tcp 127.0.0.1:2379: bind: address already in use"}`, true},
		{"apiserver bind failure", "E1122 failed to listen on 127.0.0.1:6443: listen tcp 127.0.0.1:6443: bind: address already in use", true},
		{"other failure", "F1122 invalid flag --foo", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.log")
			if err := os.WriteFile(path, []byte(tc.log+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			c := &cluster{procs: []*proc{{name: "x", logPath: path}}}
			if got := c.portClash(); got != tc.want {
				t.Errorf("portClash() = %v, want %v", got, tc.want)
			}
		})
	}
}
