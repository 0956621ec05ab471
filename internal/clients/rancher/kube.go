package rancher

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/upstream"
)

// ClusterProxy is what a Kubernetes REST client needs to reach a downstream cluster through
// Rancher's /k8s/clusters/<id> proxy, as kubectl does with a Rancher-made kubeconfig: the
// configured URL, the API key as bearer token, the TLS settings, and a transport that retries
// under kube (the configuration's upstreams.kubernetes section over DefaultRetry and
// DefaultTimeout). Kubernetes objects have fixed names, so every request may be repeated: a
// repeated create answers 409, which callers treat as "exists". internal/kubeapi builds the
// client from it; client-go follows no links, so requests stay on the configured URL.
func (c *Client) ClusterProxy(clusterID string, kube upstream.Settings) *rest.Config {
	pol := kube.RetryPolicy().Or(DefaultRetry)
	timeout := kube.TimeoutOr(DefaultTimeout)
	return &rest.Config{
		Host:            c.URL() + "/k8s/clusters/" + url.PathEscape(clusterID),
		BearerToken:     c.token.Reveal(),
		TLSClientConfig: rest.TLSClientConfig{Insecure: c.tls.Insecure, CAData: c.tls.CAData},
		Timeout:         timeout,
		QPS:             50,
		Burst:           100,
		UserAgent:       "site-agent-rancher",
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
			return upstream.NewRetryTransport(upstream.Attempt(rt, timeout),
				upstream.RetryOptions{Policy: pol, Name: "kubernetes", Logger: c.log})
		},
	}
}

// Kubeconfig is how a client reaches a cluster through Rancher, as Rancher's
// generateKubeconfig hands it out.
type Kubeconfig struct {
	Server string        // https://<rancher>/k8s/clusters/<id>
	Token  secret.Secret // a Rancher API token scoped to the cluster
	CAData []byte        // PEM of Rancher's CA; nil when Rancher's certificate is publicly trusted
}

// GenerateKubeconfig asks Rancher for a kubeconfig of the cluster (POST
// /v3/clusters/<id>?action=generateKubeconfig) and returns its server, token and CA. Rancher
// makes a new API token at every call, so callers keep what it returns rather than asking
// again. The token never appears in errors.
func (c *Client) GenerateKubeconfig(ctx context.Context, clusterID string) (Kubeconfig, error) {
	var out struct {
		Config string `json:"config"`
	}
	if err := c.do(ctx, http.MethodPost, clusterPath(clusterID), query("action", "generateKubeconfig"), nil, &out); err != nil {
		return Kubeconfig{}, err
	}
	defer secret.New(out.Config).Forget()
	cfg, err := clientcmd.Load([]byte(out.Config))
	if err != nil {
		return Kubeconfig{}, fmt.Errorf("rancher: the kubeconfig of cluster %s does not parse", clusterID)
	}
	kctx := cfg.Contexts[cfg.CurrentContext]
	if kctx == nil {
		return Kubeconfig{}, fmt.Errorf("rancher: the kubeconfig of cluster %s has no current context", clusterID)
	}
	cl, user := cfg.Clusters[kctx.Cluster], cfg.AuthInfos[kctx.AuthInfo]
	if cl == nil || user == nil || cl.Server == "" || user.Token == "" {
		return Kubeconfig{}, fmt.Errorf("rancher: the kubeconfig of cluster %s lacks a server or a token", clusterID)
	}
	return Kubeconfig{Server: cl.Server, Token: secret.New(user.Token), CAData: cl.CertificateAuthorityData}, nil
}
