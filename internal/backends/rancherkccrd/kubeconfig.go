package rancherkccrd

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// restConfig loads the Kubernetes client configuration as the incumbent does: kubeconfig_path
// (with context) when set; else the pod's service account; else the default kubeconfig
// ($KUBECONFIG or ~/.kube/config) with context. It reads files only.
func restConfig(c *config) (*rest.Config, error) {
	overrides := &clientcmd.ConfigOverrides{CurrentContext: c.context}
	if c.kubeconfig != "" {
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: c.kubeconfig}
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("backend_settings.kubeconfig_path: %s (context %q): %s", c.kubeconfig, c.context, firstLine(err))
		}
		return cfg, nil
	}
	cfg, err := rest.InClusterConfig()
	if err == nil {
		return cfg, nil
	}
	if !errors.Is(err, rest.ErrNotInCluster) {
		return nil, fmt.Errorf("backend_settings.kubeconfig_path: not set, and the pod's service account cannot be used: %s", firstLine(err))
	}
	cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("backend_settings.kubeconfig_path: not set, not running in a pod, and the default kubeconfig "+
			"($KUBECONFIG or ~/.kube/config) cannot be used: %s", firstLine(err))
	}
	return cfg, nil
}

// firstLine keeps an error's first line (client-go's kubeconfig errors may quote the file).
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
