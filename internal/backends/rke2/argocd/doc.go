// Package argocd registers rke2 clusters with an ArgoCD instance, as Waldur's Rancher
// integration does (seed 000): a Secret cluster-<resource uuid> in ArgoCD's namespace, labelled
// argocd.argoproj.io/secret-type=cluster (and k8s.waldur.com/longhorn-enabled=true when the
// cluster has Longhorn), whose stringData holds the cluster's name, its Rancher proxy URL and a
// bearer token from Rancher's generateKubeconfig.
//
// It reaches the ArgoCD cluster through internal/kubeapi (core/v1 only) with the kubeconfig of
// the offering's argocd_k8s_kubeconfig setting. It never logs or returns the token, and it
// mints a token only when the secret is missing: Rancher makes a new API token per kubeconfig.
package argocd
