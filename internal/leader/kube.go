package leader

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// serviceAccountNamespace is where a pod finds its own namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// RESTConfig loads the client configuration from a kubeconfig file, or from the pod's service
// account when kubeconfig is empty. It reads files only; no network call.
func RESTConfig(kubeconfig, userAgent string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
		}
	} else {
		cfg, err = rest.InClusterConfig()
		if errors.Is(err, rest.ErrNotInCluster) {
			return nil, errors.New("not running in a Kubernetes pod: set kubeconfig (--kubeconfig)")
		}
		if err != nil {
			return nil, fmt.Errorf("in-cluster configuration: %w", err)
		}
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = userAgent
	cfg.WarningHandler = rest.NoWarnings{}
	return cfg, nil
}

// Namespace returns ns, or the pod's own namespace when ns is empty.
func Namespace(ns string) (string, error) {
	if ns != "" {
		return ns, nil
	}
	data, err := os.ReadFile(serviceAccountNamespace)
	if err != nil || strings.TrimSpace(string(data)) == "" {
		return "", errors.New("no namespace given and not running in a Kubernetes pod: set namespace (--leader-elect-resource-namespace)")
	}
	return strings.TrimSpace(string(data)), nil
}
