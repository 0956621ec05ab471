package controlplane

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A directory's credentials: a serving certificate for the loopback names, the admin token in
// the token file with system:masters and in the kubeconfig, kept over a restart; another
// directory has another token.
func TestCredentialsAreWrittenOnceAndKept(t *testing.T) {
	l := newLayout(t.TempDir())
	token, caPEM, err := l.credentials("https://127.0.0.1:6443")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("CA PEM does not parse")
	}
	certPEM, err := os.ReadFile(l.cert)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"127.0.0.1", "localhost", "kubernetes.default.svc"} {
		opts := x509.VerifyOptions{Roots: pool, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		if _, err := cert.Verify(opts); err != nil {
			t.Errorf("serving cert does not verify for %s: %v", name, err)
		}
	}
	tokens, err := os.ReadFile(l.tokens)
	if want := token + `,admin,admin,"system:masters"` + "\n"; err != nil || string(tokens) != want {
		t.Errorf("tokens.csv = %q (%v), want %q", tokens, err, want)
	}
	kubeconfig, err := os.ReadFile(l.kubecfg)
	for _, want := range []string{"server: https://127.0.0.1:6443", "token: " + token} {
		if err != nil || !strings.Contains(string(kubeconfig), want) {
			t.Errorf("kubeconfig lacks %q (%v):\n%s", want, err, kubeconfig)
		}
	}
	if again, caAgain, err := l.credentials("https://127.0.0.1:6443"); err != nil || again != token || string(caAgain) != string(caPEM) {
		t.Errorf("a restart changed the token or CA (%v)", err)
	}
	if other, _, _ := newLayout(t.TempDir()).credentials("https://127.0.0.1:6443"); other == token {
		t.Error("two directories share a token")
	}
	for _, path := range []string{l.tokens, l.kubecfg, l.key, l.saKey} {
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600", path, st, err)
		}
	}
}

// Ports are chosen free and distinct once, and read back at the next start.
func TestPortsAreChosenOnceAndKept(t *testing.T) {
	l := newLayout(t.TempDir())
	p, err := l.loadPorts(0)
	if err != nil {
		t.Fatal(err)
	}
	if p.EtcdClient == p.EtcdPeer || p.EtcdPeer == p.APIServer || p.EtcdClient == p.APIServer || p.APIServer == 0 {
		t.Errorf("ports %+v, want 3 distinct ports", p)
	}
	if again, err := l.loadPorts(1234); err != nil || again != p {
		t.Errorf("second start: %+v %v, want %+v", again, err, p)
	}
	if fixed, _ := newLayout(t.TempDir()).loadPorts(1234); fixed.APIServer != 1234 {
		t.Errorf("the configured API server port was not used: %+v", fixed)
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
	if got, want := TailFile(path, 3), "line 97\nline 98\nline 99"; got != want {
		t.Errorf("TailFile = %q, want %q", got, want)
	}
	if got := TailFile(filepath.Join(t.TempDir(), "missing"), 3); !strings.Contains(got, "cannot read") {
		t.Errorf("TailFile(missing) = %q", got)
	}
}

func TestPortClashDetected(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		want      bool
	}{
		{"etcd bind failure", `{"level":"fatal","msg":"listen tcp 127.0.0.1:2379: bind: address already in use"}`, true},
		{"apiserver bind failure", "E1122 failed to listen on 127.0.0.1:6443: listen tcp 127.0.0.1:6443: bind: address already in use", true},
		{"other failure", "F1122 invalid flag --foo", false},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "x.log"), []byte(tc.log+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := PortClash(dir); got != tc.want {
			t.Errorf("%s: PortClash() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
