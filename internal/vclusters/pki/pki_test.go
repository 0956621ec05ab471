package pki_test

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"

	"github.com/waldur/site-agent/internal/vclusters/pki"
)

func TestCAIsKeptAndIssuesLoopbackCertificates(t *testing.T) {
	dir := t.TempDir()
	ca, err := pki.LoadOrCreateCA(dir, "proxy-ca", "test CA")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, "proxy-ca-key.pem")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v %v", st, err)
	}
	again, err := pki.LoadOrCreateCA(dir, "proxy-ca", "test CA")
	if err != nil || string(again.PEM) != string(ca.PEM) {
		t.Fatalf("second load made a new CA: %v", err)
	}
	srv, err := again.IssueServing("proxy")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(srv.TLS.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.PEM)
	for _, host := range []string{"127.0.0.1", "::1", "localhost"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: host}); err != nil {
			t.Errorf("%s: %v", host, err)
		}
	}
	_ = os.Remove(filepath.Join(dir, "proxy-ca-key.pem"))
	if _, err := pki.LoadOrCreateCA(dir, "proxy-ca", "test CA"); err == nil {
		t.Error("a CA without its key was accepted (or silently replaced)")
	}
}
