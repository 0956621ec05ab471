package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA is a certificate authority with its key.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	PEM  []byte // the certificate, PEM-encoded
}

// LoadOrCreateCA reads <dir>/<name>.pem and <name>-key.pem, creating them when both are absent.
func LoadOrCreateCA(dir, name, commonName string) (*CA, error) {
	certPath, keyPath := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	certPEM, cerr := os.ReadFile(certPath)
	keyPEM, kerr := os.ReadFile(keyPath)
	switch {
	case cerr == nil && kerr == nil:
		return parseCA(certPEM, keyPEM, certPath)
	case !errors.Is(cerr, os.ErrNotExist) && cerr != nil:
		return nil, cerr
	case !errors.Is(kerr, os.ErrNotExist) && kerr != nil:
		return nil, kerr
	case (cerr == nil) != (kerr == nil):
		return nil, fmt.Errorf("%s and %s must both exist or both be absent", certPath, keyPath)
	}
	ca, err := NewCA(commonName)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(ca.Key)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(certPath, ca.PEM, 0o644); err != nil {
		return nil, err
	}
	return ca, nil
}

// NewCA creates a CA in memory.
func NewCA(commonName string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: commonName},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

func parseCA(certPEM, keyPEM []byte, where string) (*CA, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("%s: not a PEM certificate and key", where)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s key: %w", where, err)
	}
	return &CA{Cert: cert, Key: key, PEM: certPEM}, nil
}

// Serving is an issued certificate with its key (a serving, peer or client certificate).
type Serving struct {
	CertPEM, KeyPEM []byte
	TLS             tls.Certificate
}

// IssueServing issues a one-year serving certificate for 127.0.0.1, ::1, localhost and names.
func (ca *CA) IssueServing(commonName string, names ...string) (*Serving, error) {
	return ca.issue(commonName, nil, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, true, names)
}

// IssuePeer issues a one-year certificate that serves and authenticates as a client, for
// 127.0.0.1, ::1, localhost and names: an etcd member's, which its peers both dial and answer.
func (ca *CA) IssuePeer(commonName string, names ...string) (*Serving, error) {
	return ca.issue(commonName, nil, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, true, names)
}

// IssueClient issues a one-year client certificate for commonName in the organizations (which
// Kubernetes reads as groups).
func (ca *CA) IssueClient(commonName string, organizations ...string) (*Serving, error) {
	return ca.issue(commonName, organizations, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, false, nil)
}

func (ca *CA) issue(commonName string, orgs []string, usages []x509.ExtKeyUsage, loopback bool, names []string) (*Serving, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: commonName, Organization: orgs},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usages}
	if loopback {
		tmpl.DNSNames = append([]string{"localhost"}, names...)
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	s := &Serving{CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})}
	s.TLS, err = tls.X509KeyPair(s.CertPEM, s.KeyPEM)
	return s, err
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}
