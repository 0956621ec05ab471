package rancherv1

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
)

// Kubeconfig asks Rancher for a kubeconfig of the cluster (POST
// /v3/clusters/<id>?action=generateKubeconfig) and returns its server, token and CA. Rancher
// makes a new API token at every call, so callers keep what it returns rather than asking
// again. The token never appears in errors.
func (c *Client) Kubeconfig(ctx context.Context, rc rke2.RancherCluster) (rke2.Kubeconfig, error) {
	if rc.ManagementID == "" {
		return rke2.Kubeconfig{}, fmt.Errorf("cluster %s has no management id yet: %w", rc.Name, failure.ErrNotReady)
	}
	var out struct {
		Config string `json:"config"`
	}
	path := "/v3/clusters/" + url.PathEscape(rc.ManagementID) + "?action=generateKubeconfig"
	if err := c.do(ctx, http.MethodPost, path, nil, &out); err != nil {
		return rke2.Kubeconfig{}, err
	}
	defer secret.New(out.Config).Forget()
	cfg, err := clientcmd.Load([]byte(out.Config))
	if err != nil {
		return rke2.Kubeconfig{}, fmt.Errorf("rancher: the kubeconfig of cluster %s does not parse", rc.ManagementID)
	}
	ctxName := cfg.CurrentContext
	kctx := cfg.Contexts[ctxName]
	if kctx == nil {
		return rke2.Kubeconfig{}, fmt.Errorf("rancher: the kubeconfig of cluster %s has no current context", rc.ManagementID)
	}
	cl, user := cfg.Clusters[kctx.Cluster], cfg.AuthInfos[kctx.AuthInfo]
	if cl == nil || user == nil || cl.Server == "" || user.Token == "" {
		return rke2.Kubeconfig{}, fmt.Errorf("rancher: the kubeconfig of cluster %s lacks a server or a token", rc.ManagementID)
	}
	return rke2.Kubeconfig{Server: cl.Server, Token: secret.New(user.Token), CAData: cl.CertificateAuthorityData}, nil
}
