package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/waldur/site-agent/internal/vclusters/pki"
)

// layout are the files of a control plane directory.
type layout struct {
	dir                                          string
	ca, cert, key, saKey, saPub, tokens, kubecfg string
	ports, etcdData                              string
	// etcd's CA, its certificate (serving clients and peers) and the API server's client one
	etcdCA, etcdCert, etcdKey, etcdClientCert, etcdClientKey string
}

func newLayout(dir string) layout {
	j := func(n string) string { return filepath.Join(dir, n) }
	return layout{dir: dir, ca: j("ca.pem"), cert: j("apiserver.pem"), key: j("apiserver-key.pem"),
		saKey: j("sa-key.pem"), saPub: j("sa.pub"), tokens: j("tokens.csv"), kubecfg: j("admin.kubeconfig"),
		ports: j("ports.json"), etcdData: j("etcd"),
		etcdCA: j("etcd-ca.pem"), etcdCert: j("etcd.pem"), etcdKey: j("etcd-key.pem"),
		etcdClientCert: j("apiserver-etcd-client.pem"), etcdClientKey: j("apiserver-etcd-client-key.pem")}
}

// ports are chosen once and kept, so the API server's address never changes.
type ports struct {
	EtcdClient int `json:"etcdClient"`
	EtcdPeer   int `json:"etcdPeer"`
	APIServer  int `json:"apiServer"`
}

func (l layout) loadPorts(apiPort int) (ports, error) {
	var p ports
	data, err := os.ReadFile(l.ports)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &p); err != nil {
			return p, fmt.Errorf("%s: %w", l.ports, err)
		}
		return p, nil
	case !errors.Is(err, os.ErrNotExist):
		return p, err
	}
	free, err := freePorts(3)
	if err != nil {
		return p, err
	}
	p = ports{EtcdClient: free[0], EtcdPeer: free[1], APIServer: free[2]}
	if apiPort > 0 {
		p.APIServer = apiPort
	}
	data, _ = json.Marshal(p)
	return p, os.WriteFile(l.ports, data, 0o600)
}

// credentials writes (once) the service-account key pair and the admin token, and (every
// start) the serving certificate and the admin kubeconfig.
func (l layout) credentials(host string) (token string, caPEM []byte, err error) {
	ca, err := pki.LoadOrCreateCA(l.dir, "ca", "site-agent virtual-clusters main API CA")
	if err != nil {
		return "", nil, err
	}
	srv, err := ca.IssueServing("kube-apiserver", "kubernetes", "kubernetes.default", "kubernetes.default.svc")
	if err != nil {
		return "", nil, err
	}
	if err := writeAll(map[string][]byte{l.cert: srv.CertPEM, l.key: srv.KeyPEM}); err != nil {
		return "", nil, err
	}
	if err := l.etcdCredentials(); err != nil {
		return "", nil, err
	}
	if err := l.ensureSAKey(); err != nil {
		return "", nil, err
	}
	if token, err = l.ensureToken(); err != nil {
		return "", nil, err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["main"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: ca.PEM}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["main"] = &clientcmdapi.Context{Cluster: "main", AuthInfo: "admin"}
	cfg.CurrentContext = "main"
	return token, ca.PEM, clientcmd.WriteToFile(*cfg, l.kubecfg)
}

// etcdCredentials issues (every start) etcd's certificate for its client and peer listeners and
// the API server's client certificate, from etcd's own CA: etcd answers no one without one (it
// holds every Secret), and no certificate of the API server's CA opens it.
func (l layout) etcdCredentials() error {
	ca, err := pki.LoadOrCreateCA(l.dir, "etcd-ca", "site-agent virtual-clusters etcd CA")
	if err != nil {
		return err
	}
	member, err := ca.IssuePeer("etcd")
	if err != nil {
		return err
	}
	client, err := ca.IssueClient("kube-apiserver-etcd-client")
	if err != nil {
		return err
	}
	return writeAll(map[string][]byte{l.etcdCert: member.CertPEM, l.etcdKey: member.KeyPEM,
		l.etcdClientCert: client.CertPEM, l.etcdClientKey: client.KeyPEM})
}

func (l layout) ensureSAKey() error {
	if _, err := os.Stat(l.saKey); err == nil {
		return nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	return writeAll(map[string][]byte{
		l.saKey: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}),
		l.saPub: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}),
	})
}

func (l layout) ensureToken() (string, error) {
	if data, err := os.ReadFile(l.tokens); err == nil {
		tok, _, ok := cutComma(string(data))
		if ok {
			return tok, nil
		}
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(b)
	return tok, writeAll(map[string][]byte{l.tokens: fmt.Appendf(nil, "%s,admin,admin,\"system:masters\"\n", tok)})
}

func cutComma(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == ',' {
			return s[:i], s[i+1:], i > 0
		}
	}
	return "", "", false
}

func writeAll(files map[string][]byte) error {
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// freePorts returns n distinct loopback ports that were free a moment ago (all are held open
// together, then released).
func freePorts(n int) ([]int, error) {
	out := make([]int, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick a free port: %w", err)
		}
		defer ln.Close()
		out = append(out, ln.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}
