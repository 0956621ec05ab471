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

// A client certificate authenticates only as a client, a peer certificate both ways; a client
// certificate of another CA does not verify.
func TestPeerAndClientCertificates(t *testing.T) {
	ca, err := pki.NewCA("etcd CA")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := pki.NewCA("other CA")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.PEM)
	verify := func(s *pki.Serving, usage x509.ExtKeyUsage, host string) error {
		leaf, err := x509.ParseCertificate(s.TLS.Certificate[0])
		if err != nil {
			return err
		}
		_, err = leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: host, KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}
	peer, err := ca.IssuePeer("etcd")
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.IssueClient("kube-apiserver-etcd-client", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	foreign, _ := other.IssueClient("intruder")
	for _, tc := range []struct {
		name  string
		s     *pki.Serving
		usage x509.ExtKeyUsage
		host  string
		ok    bool
	}{
		{"peer serves", peer, x509.ExtKeyUsageServerAuth, "127.0.0.1", true},
		{"peer dials", peer, x509.ExtKeyUsageClientAuth, "", true},
		{"client dials", client, x509.ExtKeyUsageClientAuth, "", true},
		{"client cannot serve", client, x509.ExtKeyUsageServerAuth, "", false},
		{"another CA's client", foreign, x509.ExtKeyUsageClientAuth, "", false},
	} {
		if err := verify(tc.s, tc.usage, tc.host); (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	leaf, _ := x509.ParseCertificate(client.TLS.Certificate[0])
	if leaf.Subject.CommonName != "kube-apiserver-etcd-client" || len(leaf.Subject.Organization) != 1 || len(leaf.IPAddresses) != 0 {
		t.Errorf("client subject %v, IPs %v", leaf.Subject, leaf.IPAddresses)
	}
}
