package kubeenv

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// startEtcd runs a single-member etcd with its data in dataDir and waits for /health.
func (c *cluster) startEtcd(ctx context.Context, bin, dataDir, clientURL string, peerPort int) error {
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	err := c.run("etcd", bin, []string{
		"--name=default",
		"--data-dir=" + dataDir,
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=default=" + peerURL,
		// A lone member still waits out an election timeout before leading: keep it short.
		"--heartbeat-interval=10",
		"--election-timeout=100",
		"--logger=zap",
		"--log-outputs=stderr",
	})
	if err != nil {
		return err
	}
	client := &http.Client{}
	return c.poll(ctx, "etcd /health", 50*time.Millisecond, func(ctx context.Context) error {
		body, err := get(ctx, client, clientURL+"/health", "")
		if err != nil {
			return err
		}
		if !strings.Contains(body, `"health":"true"`) {
			return fmt.Errorf("unhealthy: %s", body)
		}
		return nil
	})
}

// startAPIServer runs kube-apiserver against etcd and waits until /readyz answers 200.
func (c *cluster) startAPIServer(ctx context.Context, bin string, f files, etcdURL string, port int) error {
	err := c.run("kube-apiserver", bin, []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + f.tlsCert,
		"--tls-private-key-file=" + f.tlsKey,
		"--token-auth-file=" + f.tokens,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + f.saPub,
		"--service-account-signing-key-file=" + f.saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--profiling=false",
		// The lease reconciler would publish 127.0.0.1 as the "kubernetes" service endpoint,
		// which validation rejects (loopback), and log the failure every 10 s.
		"--endpoint-reconciler-type=none",
		// Watch streams (WatchList) need etcd's progress requests, which Debian's etcd 3.4.23
		// lacks: the server accepts them and ends each at once, and informers that ask for them
		// (client-go v0.36, e.g. KWOK's) never catch up. Refused, they fall back to list and watch.
		"--feature-gates=WatchList=false",
	})
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.env.CAData)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer client.CloseIdleConnections()
	return c.poll(ctx, "kube-apiserver /readyz", 100*time.Millisecond, func(ctx context.Context) error {
		_, err := get(ctx, client, c.env.Host+"/readyz", c.env.Token)
		return err
	})
}

// startControllerManager runs kube-controller-manager with the controllers quota accounting
// and service-account tokens need (no HTTPS endpoint of its own) and waits until the serviceaccount controller has
// created the "default" ServiceAccount, which proves it is connected and working.
func (c *cluster) startControllerManager(ctx context.Context, bin string, f files) error {
	err := c.run("kube-controller-manager", bin, []string{
		"--kubeconfig=" + f.kubeconfig,
		// serviceaccount-token fills service-account token Secrets (what Rancher's cluster agent
		// reads its token from), with the key that signs the apiserver's own tokens.
		"--controllers=resourcequota,serviceaccount,serviceaccount-token,namespace",
		"--service-account-private-key-file=" + f.saKey,
		"--root-ca-file=" + f.ca,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=0",
		// Quota admission charges a new pod only if the apiserver's cache already holds the
		// namespace's quotas; a pod created right after its quota can slip through uncharged
		// until the next full recount (5 min by default). Recount often: tests see settled
		// usage within seconds, like a real cluster eventually does.
		"--resource-quota-sync-period=2s",
	})
	if err != nil {
		return err
	}
	return c.poll(ctx, `the "default" ServiceAccount`, 100*time.Millisecond, func(ctx context.Context) error {
		return c.env.checkDefaultServiceAccount(ctx, "default")
	})
}

// newEnv builds the client side of a cluster whose apiserver will listen at host.
func newEnv(host string, creds *credentials, dir string, c *cluster) (*Env, error) {
	cfg := &rest.Config{
		Host:            host,
		BearerToken:     creds.token,
		TLSClientConfig: rest.TLSClientConfig{CAData: creds.caPEM},
		QPS:             200,
		Burst:           400,
		Timeout:         30 * time.Second,
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("build clientset: %w", err)
	}
	return &Env{
		Host: host, Token: creds.token, CAData: creds.caPEM,
		Config: cfg, Clientset: cs, Dir: dir, cluster: c,
	}, nil
}

// get performs a GET and returns the body of a 200 answer.
func get(ctx context.Context, client *http.Client, url, token string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", errors.New(resp.Status + ": " + strings.TrimSpace(string(body)))
	}
	return string(body), nil
}
