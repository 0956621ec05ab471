package kubeapi

import corev1 "k8s.io/api/core/v1"

// CoreV1 is the core/v1 resources the agent and its tools use, named as client-go's typed
// CoreV1 client names them. G must be a core/v1 Group.
type CoreV1 struct{ G *Group }

// Namespaces is the cluster's namespaces.
func (c CoreV1) Namespaces() Resource[*corev1.Namespace, *corev1.NamespaceList] {
	return NewResource[corev1.Namespace, corev1.NamespaceList](c.G, "namespaces", "")
}

// Nodes is the cluster's nodes.
func (c CoreV1) Nodes() Resource[*corev1.Node, *corev1.NodeList] {
	return NewResource[corev1.Node, corev1.NodeList](c.G, "nodes", "")
}

// Pods is the pods of namespace ns ("": all namespaces).
func (c CoreV1) Pods(ns string) Resource[*corev1.Pod, *corev1.PodList] {
	return NewResource[corev1.Pod, corev1.PodList](c.G, "pods", ns)
}

// Secrets is the secrets of namespace ns.
func (c CoreV1) Secrets(ns string) Resource[*corev1.Secret, *corev1.SecretList] {
	return NewResource[corev1.Secret, corev1.SecretList](c.G, "secrets", ns)
}

// ServiceAccounts is the service accounts of namespace ns.
func (c CoreV1) ServiceAccounts(ns string) Resource[*corev1.ServiceAccount, *corev1.ServiceAccountList] {
	return NewResource[corev1.ServiceAccount, corev1.ServiceAccountList](c.G, "serviceaccounts", ns)
}

// ResourceQuotas is the resource quotas of namespace ns ("": all namespaces).
func (c CoreV1) ResourceQuotas(ns string) Resource[*corev1.ResourceQuota, *corev1.ResourceQuotaList] {
	return NewResource[corev1.ResourceQuota, corev1.ResourceQuotaList](c.G, "resourcequotas", ns)
}

// PersistentVolumeClaims is the claims of namespace ns ("": all namespaces).
func (c CoreV1) PersistentVolumeClaims(ns string) Resource[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList] {
	return NewResource[corev1.PersistentVolumeClaim, corev1.PersistentVolumeClaimList](c.G, "persistentvolumeclaims", ns)
}
