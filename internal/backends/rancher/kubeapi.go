package rancher

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"

	"github.com/waldur/site-agent/internal/kubeapi"
)

// kubeAPI is the part of client-go's generated clientset the backend uses: CoreV1 namespaces,
// resource quotas, pods and persistent volume claims, and the server version. Calls read exactly
// as with a clientset; they go through internal/kubeapi, whose scheme holds core/v1 only and is
// built at the first Kubernetes call (an idle agent, or one that only pings Rancher, never pays
// for registering the core/v1 types).
type kubeAPI struct{ core *kubeapi.Group }

// coreScheme holds core/v1.
var coreScheme = kubeapi.NewScheme(corev1.AddToScheme)

// newKubeAPI returns the client for c. The HTTP client is made now, so a configuration it
// cannot use is reported at start-up.
func newKubeAPI(c *rest.Config) (*kubeAPI, error) {
	g, err := kubeapi.NewGroup(c, nil, corev1.SchemeGroupVersion, coreScheme)
	if err != nil {
		return nil, err
	}
	return &kubeAPI{core: g}, nil
}

// CoreV1 returns the core/v1 resources.
func (a *kubeAPI) CoreV1() coreV1 { return coreV1{g: a.core} }

// Discovery returns the server version reader.
func (a *kubeAPI) Discovery() discovery { return discovery{g: a.core} }

type coreV1 struct{ g *kubeapi.Group }

func (c coreV1) Namespaces() kubeapi.Resource[*corev1.Namespace, *corev1.NamespaceList] {
	return kubeapi.NewResource(c.g, "namespaces", "",
		func() *corev1.Namespace { return &corev1.Namespace{} }, func() *corev1.NamespaceList { return &corev1.NamespaceList{} })
}

func (c coreV1) ResourceQuotas(ns string) kubeapi.Resource[*corev1.ResourceQuota, *corev1.ResourceQuotaList] {
	return kubeapi.NewResource(c.g, "resourcequotas", ns,
		func() *corev1.ResourceQuota { return &corev1.ResourceQuota{} }, func() *corev1.ResourceQuotaList { return &corev1.ResourceQuotaList{} })
}

func (c coreV1) Pods(ns string) kubeapi.Resource[*corev1.Pod, *corev1.PodList] {
	return kubeapi.NewResource(c.g, "pods", ns, func() *corev1.Pod { return &corev1.Pod{} }, func() *corev1.PodList { return &corev1.PodList{} })
}

func (c coreV1) PersistentVolumeClaims(ns string) kubeapi.Resource[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList] {
	return kubeapi.NewResource(c.g, "persistentvolumeclaims", ns,
		func() *corev1.PersistentVolumeClaim { return &corev1.PersistentVolumeClaim{} },
		func() *corev1.PersistentVolumeClaimList { return &corev1.PersistentVolumeClaimList{} })
}

type discovery struct{ g *kubeapi.Group }

// ServerVersion reads /version, as client-go's discovery client does, but bounded by ctx (a
// diagnostics deadline).
func (d discovery) ServerVersion(ctx context.Context) (*version.Info, error) {
	return d.g.ServerVersion(ctx)
}
