package vclusters

import (
	"context"
	"encoding/json"
	"fmt"

	authv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/waldur/site-agent/internal/kubeapi"
)

// kubeScheme holds the groups the tool reads, writes or finds in Rancher's import manifest:
// core/v1, rbac/v1, authentication/v1 (token requests) and coordination/v1 (node Leases, chaos); the manifest's other kinds (the
// agent's Deployment and DaemonSet) are left out by kind and name without being decoded. The release binary links no generated clientset (see internal/kubeapi).
var kubeScheme = kubeapi.NewScheme(corev1.AddToScheme, rbacv1.AddToScheme, authv1.AddToScheme, coordinationv1.AddToScheme)

// Kube is the main API server as the tool uses it, with the calls of client-go's typed
// clients: CoreV1 and RbacV1.
type Kube struct{ core, rbac, coordination *kubeapi.Group }

// NewKube returns the client of the API server rc describes (one HTTP client for both groups).
func NewKube(rc *rest.Config) (*Kube, error) {
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		return nil, err
	}
	core, err := kubeapi.NewGroup(rc, hc, corev1.SchemeGroupVersion, kubeScheme)
	if err != nil {
		return nil, err
	}
	rbac, err := kubeapi.NewGroup(rc, hc, rbacv1.SchemeGroupVersion, kubeScheme)
	if err != nil {
		return nil, err
	}
	coordination, err := kubeapi.NewGroup(rc, hc, coordinationv1.SchemeGroupVersion, kubeScheme)
	if err != nil {
		return nil, err
	}
	return &Kube{core: core, rbac: rbac, coordination: coordination}, nil
}

// NodeLeases is the kube-node-lease namespace's Leases (the Nodes' heartbeats).
func (k *Kube) NodeLeases() kubeapi.Resource[*coordinationv1.Lease, *coordinationv1.LeaseList] {
	return kubeapi.NewResource[coordinationv1.Lease, coordinationv1.LeaseList](k.coordination, "leases", corev1.NamespaceNodeLease)
}

// CoreV1 returns the core/v1 resources.
func (k *Kube) CoreV1() CoreV1 { return CoreV1{kubeapi.CoreV1{G: k.core}} }

// RbacV1 returns the rbac/v1 resources.
func (k *Kube) RbacV1() RbacV1 { return RbacV1{g: k.rbac} }

// CoreV1 is the core/v1 group, with token requests on service accounts.
type CoreV1 struct{ kubeapi.CoreV1 }

// ServiceAccounts is the service accounts of namespace ns, with token requests.
func (c CoreV1) ServiceAccounts(ns string) ServiceAccounts {
	return ServiceAccounts{c.CoreV1.ServiceAccounts(ns)}
}

// ServiceAccounts adds the token subresource to the typed resource.
type ServiceAccounts struct {
	kubeapi.Resource[*corev1.ServiceAccount, *corev1.ServiceAccountList]
}

// CreateToken requests a token for the service account name.
func (s ServiceAccounts) CreateToken(ctx context.Context, name string, tr *authv1.TokenRequest, opts metav1.CreateOptions) (*authv1.TokenRequest, error) {
	out := &authv1.TokenRequest{}
	return out, s.CreateSub(ctx, name, "token", tr, out, opts)
}

// RbacV1 is the rbac.authorization.k8s.io/v1 group.
type RbacV1 struct{ g *kubeapi.Group }

// ClusterRoles is the cluster's cluster roles.
func (r RbacV1) ClusterRoles() kubeapi.Resource[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList] {
	return kubeapi.NewResource[rbacv1.ClusterRole, rbacv1.ClusterRoleList](r.g, "clusterroles", "")
}

// ClusterRoleBindings is the cluster's cluster role bindings.
func (r RbacV1) ClusterRoleBindings() kubeapi.Resource[*rbacv1.ClusterRoleBinding, *rbacv1.ClusterRoleBindingList] {
	return kubeapi.NewResource[rbacv1.ClusterRoleBinding, rbacv1.ClusterRoleBindingList](r.g, "clusterrolebindings", "")
}

// Roles is the roles of namespace ns.
func (r RbacV1) Roles(ns string) kubeapi.Resource[*rbacv1.Role, *rbacv1.RoleList] {
	return kubeapi.NewResource[rbacv1.Role, rbacv1.RoleList](r.g, "roles", ns)
}

// RoleBindings is the role bindings of namespace ns.
func (r RbacV1) RoleBindings(ns string) kubeapi.Resource[*rbacv1.RoleBinding, *rbacv1.RoleBindingList] {
	return kubeapi.NewResource[rbacv1.RoleBinding, rbacv1.RoleBindingList](r.g, "rolebindings", ns)
}

// PodResources is what the pod-resource annotations need of a Pod, as ListPodResources decodes it.
type PodResources struct {
	Metadata struct {
		Name            string `json:"name"`
		Namespace       string `json:"namespace"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Spec struct {
		NodeName       string               `json:"nodeName"`
		Containers     []ContainerResources `json:"containers"`
		InitContainers []ContainerResources `json:"initContainers"`
	} `json:"spec"`
	Status struct {
		Phase corev1.PodPhase `json:"phase"`
	} `json:"status"`
}

// ContainerResources is a container's requests and limits.
type ContainerResources struct {
	Resources corev1.ResourceRequirements `json:"resources"`
}

// podResourcesOf is what PodResources reads of a Pod.
func podResourcesOf(p *corev1.Pod) *PodResources {
	var r PodResources
	r.Metadata.Name, r.Metadata.Namespace = p.Name, p.Namespace
	r.Spec.NodeName, r.Status.Phase = p.Spec.NodeName, p.Status.Phase
	for _, c := range p.Spec.Containers {
		r.Spec.Containers = append(r.Spec.Containers, ContainerResources{Resources: c.Resources})
	}
	for _, c := range p.Spec.InitContainers {
		r.Spec.InitContainers = append(r.Spec.InitContainers, ContainerResources{Resources: c.Resources})
	}
	return &r
}

// Counts tells whether the Pod's resources count on its Node: bound and not terminated.
func (p *PodResources) Counts() bool {
	return p.Spec.NodeName != "" && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// ListPodResources lists the Pods of every namespace the field selector picks ("" for all) from
// the API server's watch cache (resourceVersion 0, as the agent's informers list), decoding only
// the fields PodResources has: with tens of thousands of Pods a typed list costs the tool tens of
// MiB of garbage (managed fields, status, the whole spec).
func (k *Kube) ListPodResources(ctx context.Context, fieldSelector string) ([]PodResources, error) {
	items, _, err := k.listPodResources(ctx, fieldSelector)
	return items, err
}

// listPodResources is ListPodResources with the list's resource version, to watch from.
func (k *Kube) listPodResources(ctx context.Context, fieldSelector string) ([]PodResources, string, error) {
	rc, err := k.core.REST()
	if err != nil {
		return nil, "", err
	}
	req := rc.Get().AbsPath("/api/v1/pods").Param("resourceVersion", "0")
	if fieldSelector != "" {
		req = req.Param("fieldSelector", fieldSelector)
	}
	body, err := req.Stream(ctx)
	if err != nil {
		return nil, "", err
	}
	defer body.Close()
	return decodeItems[PodResources](json.NewDecoder(body))
}

// decodeItems decodes a list's items one at a time as they stream in (the decoder's buffer holds
// one item, not the whole list) and returns them with the list's resource version.
func decodeItems[T any](dec *json.Decoder) ([]T, string, error) {
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, "", fmt.Errorf("decode the list: not an object (%v)", err)
	}
	var items []T
	var meta metav1.ListMeta
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, "", fmt.Errorf("decode the list: %w", err)
		}
		switch key {
		case "metadata":
			if err := dec.Decode(&meta); err != nil {
				return nil, "", fmt.Errorf("decode the list's metadata: %w", err)
			}
			continue
		case "items":
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, "", fmt.Errorf("decode the list's %v: %w", key, err)
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			if t == nil && err == nil {
				continue // "items": null
			}
			return nil, "", fmt.Errorf("decode the list's items: not an array (%v)", err)
		}
		for dec.More() {
			var item T
			if err := dec.Decode(&item); err != nil {
				return nil, "", fmt.Errorf("decode the list's items: %w", err)
			}
			items = append(items, item)
		}
		if _, err := dec.Token(); err != nil {
			return nil, "", fmt.Errorf("decode the list's items: %w", err)
		}
	}
	return items, meta.ResourceVersion, nil
}
