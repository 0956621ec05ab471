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
func (a *kubeAPI) CoreV1() kubeapi.CoreV1 { return kubeapi.CoreV1{G: a.core} }

// Discovery returns the server version reader.
func (a *kubeAPI) Discovery() discovery { return discovery{g: a.core} }

type discovery struct{ g *kubeapi.Group }

// ServerVersion reads /version, as client-go's discovery client does, but bounded by ctx (a
// diagnostics deadline).
func (d discovery) ServerVersion(ctx context.Context) (*version.Info, error) {
	return d.g.ServerVersion(ctx)
}
