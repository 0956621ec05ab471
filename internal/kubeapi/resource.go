package kubeapi

import (
	"context"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// Object is a Kubernetes object of one kind (T is a pointer type such as *corev1.Namespace).
type Object interface {
	runtime.Object
	GetName() string
}

// Resource is one resource of one namespace ("" = cluster-scoped, or all namespaces for List),
// with the calls and signatures of a generated typed client. (client-go's gentype does the same
// but links the fake-client machinery.)
type Resource[T Object, L runtime.Object] struct {
	group    *Group
	resource string
	ns       string
	newObj   func() T
	newList  func() L
}

// NewResource returns the typed client of resource (plural, lower case) in namespace ns, whose
// objects are *O and lists *LO: NewResource[corev1.Pod, corev1.PodList](g, "pods", ns).
func NewResource[O, LO any, T interface {
	*O
	Object
}, L interface {
	*LO
	runtime.Object
}](g *Group, resource, ns string) Resource[T, L] {
	return Resource[T, L]{group: g, resource: resource, ns: ns,
		newObj: func() T { return T(new(O)) }, newList: func() L { return L(new(LO)) }}
}

// req starts a request of verb on the resource.
func (r Resource[T, L]) req(verb string) (*rest.Request, error) {
	rc, err := r.group.REST()
	if err != nil {
		return nil, err
	}
	return rc.Verb(verb).NamespaceIfScoped(r.ns, r.ns != "").Resource(r.resource), nil
}

// Get reads one object.
func (r Resource[T, L]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	out := r.newObj()
	q, err := r.req(http.MethodGet)
	if err != nil {
		return out, err
	}
	return out, q.Name(name).VersionedParams(&opts, r.group.scheme.params()).Do(ctx).Into(out)
}

// List reads one page of objects.
func (r Resource[T, L]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	var timeout time.Duration
	if opts.TimeoutSeconds != nil {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	out := r.newList()
	q, err := r.req(http.MethodGet)
	if err != nil {
		return out, err
	}
	return out, q.VersionedParams(&opts, r.group.scheme.params()).Timeout(timeout).Do(ctx).Into(out)
}

// Create creates obj and returns the stored object.
func (r Resource[T, L]) Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error) {
	out := r.newObj()
	q, err := r.req(http.MethodPost)
	if err != nil {
		return out, err
	}
	return out, q.VersionedParams(&opts, r.group.scheme.params()).Body(obj).Do(ctx).Into(out)
}

// Update replaces obj (optimistically, by its resourceVersion) and returns the stored object.
func (r Resource[T, L]) Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	out := r.newObj()
	q, err := r.req(http.MethodPut)
	if err != nil {
		return out, err
	}
	return out, q.Name(obj.GetName()).VersionedParams(&opts, r.group.scheme.params()).Body(obj).Do(ctx).Into(out)
}

// Patch applies a patch to one object (or its subresources) and returns the stored object.
func (r Resource[T, L]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error) {
	out := r.newObj()
	q, err := r.req(http.MethodPatch)
	if err != nil {
		return out, err
	}
	return out, q.SetHeader("Content-Type", string(pt)).Name(name).SubResource(subresources...).
		VersionedParams(&opts, r.group.scheme.params()).Body(data).Do(ctx).Into(out)
}

// Delete deletes one object.
func (r Resource[T, L]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	q, err := r.req(http.MethodDelete)
	if err != nil {
		return err
	}
	return q.Name(name).Body(&opts).Do(ctx).Error()
}

// DeleteCollection deletes the objects that listOpts selects.
func (r Resource[T, L]) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	q, err := r.req(http.MethodDelete)
	if err != nil {
		return err
	}
	return q.VersionedParams(&listOpts, r.group.scheme.params()).Body(&opts).Do(ctx).Error()
}

// CreateSub posts in to a subresource of one object (e.g. serviceaccounts/<name>/token) and
// decodes the answer into out.
func (r Resource[T, L]) CreateSub(ctx context.Context, name, subresource string, in, out runtime.Object, opts metav1.CreateOptions) error {
	q, err := r.req(http.MethodPost)
	if err != nil {
		return err
	}
	return q.Name(name).SubResource(subresource).VersionedParams(&opts, r.group.scheme.params()).Body(in).Do(ctx).Into(out)
}
