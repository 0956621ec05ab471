package kubeenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// credentials are generated fresh for every start: a CA and the apiserver's serving certificate
// (for 127.0.0.1 and localhost), a service-account signing key pair and an admin bearer token.
// ECDSA P-256 keys keep generation to about a millisecond.
type credentials struct {
	caPEM, certPEM, keyPEM []byte
	saPublicPEM, saKeyPEM  []byte
	token                  string
}

// files are the paths the processes read credentials from.
type files struct {
	tlsCert, tlsKey, saPub, saKey, tokens, kubeconfig, ca string
}

func newCredentials() (*credentials, error) {
	caKey, caCert, err := newCA()
	if err != nil {
		return nil, err
	}
	servingKey, servingDER, err := newServingCert(caKey, caCert)
	if err != nil {
		return nil, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate service-account key: %w", err)
	}
	c := &credentials{
		caPEM:   pemBlock("CERTIFICATE", caCert.Raw),
		certPEM: pemBlock("CERTIFICATE", servingDER),
	}
	if c.keyPEM, err = ecKeyPEM(servingKey); err != nil {
		return nil, err
	}
	if c.saKeyPEM, err = ecKeyPEM(saKey); err != nil {
		return nil, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("marshal service-account public key: %w", err)
	}
	c.saPublicPEM = pemBlock("PUBLIC KEY", saPubDER)
	c.token, err = randomToken()
	return c, err
}

// newCA creates a self-signed CA valid for a day.
func newCA() (*ecdsa.PrivateKey, *x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubeenv-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("parse CA certificate: %w", err)
	}
	return key, cert, nil
}

// newServingCert issues the apiserver's serving certificate for the loopback addresses.
func newServingCert(caKey *ecdsa.PrivateKey, ca *x509.Certificate) (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate serving key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default.svc"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("create serving certificate: %w", err)
	}
	return key, der, nil
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

func ecKeyPEM(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("marshal EC key: %w", err)
	}
	return pemBlock("EC PRIVATE KEY", der), nil
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// write stores the credentials in dir, plus a kubeconfig for the controller manager pointing at
// host. The token file gives the admin user the system:masters group.
func (c *credentials) write(dir, host string) (files, error) {
	f := files{
		tlsCert:    filepath.Join(dir, "apiserver.crt"),
		tlsKey:     filepath.Join(dir, "apiserver.key"),
		saPub:      filepath.Join(dir, "sa.pub"),
		saKey:      filepath.Join(dir, "sa.key"),
		tokens:     filepath.Join(dir, "tokens.csv"),
		kubeconfig: filepath.Join(dir, "admin.kubeconfig"),
		ca:         filepath.Join(dir, "ca.crt"),
	}
	contents := map[string][]byte{
		f.tlsCert: c.certPEM,
		f.tlsKey:  c.keyPEM,
		f.saPub:   c.saPublicPEM,
		f.saKey:   c.saKeyPEM,
		f.tokens:  fmt.Appendf(nil, "%s,admin,admin,\"system:masters\"\n", c.token),
		f.ca:      c.caPEM,
	}
	for path, data := range contents {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return files{}, fmt.Errorf("write %s: %w", path, err)
		}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: c.caPEM}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: c.token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "admin"}
	cfg.CurrentContext = "local"
	if err := clientcmd.WriteToFile(*cfg, f.kubeconfig); err != nil {
		return files{}, fmt.Errorf("write kubeconfig: %w", err)
	}
	return f, nil
}
