package rancher

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
)

// kubeAPI is the part of client-go's generated clientset the backend uses: CoreV1 namespaces,
// resource quotas, pods and persistent volume claims, and the server version. Calls read exactly as
// with a clientset; they go through a REST client whose scheme holds core/v1 only.
//
// Why not kubernetes.NewForConfig: the generated clientset links the typed clients, apply
// configurations and scheme registrations of every API group. Measured on the release binary,
// that was 8 MiB of its idle resident memory and 1.7 ms of package initialisation at every
// start, for four resources of one group.
//
// The REST client and its scheme are made at the first Kubernetes call, not at start-up: an idle
// agent, or one that only pings Rancher, never pays for registering the core/v1 types.
type kubeAPI struct {
	cfg rest.Config
	hc  *http.Client

	once sync.Once
	rc   *rest.RESTClient
	err  error
}

// coreScheme holds core/v1 and the meta/v1 options (as client-go's scheme package does).
var coreScheme = sync.OnceValues(func() (serializer.CodecFactory, runtime.ParameterCodec) {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic("rancher: core/v1 scheme: " + err.Error()) // generated registration; cannot fail
	}
	return serializer.NewCodecFactory(s), runtime.NewParameterCodec(s)
})

// newKubeAPI returns the client for c (defaults as the generated core/v1 client sets them). The
// HTTP client is made now, so a configuration it cannot use is reported at start-up.
func newKubeAPI(c *rest.Config) (*kubeAPI, error) {
	cfg := *c
	gv := corev1.SchemeGroupVersion
	cfg.GroupVersion = &gv
	cfg.APIPath = "/api"
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	hc, err := rest.HTTPClientFor(&cfg)
	if err != nil {
		return nil, err
	}
	return &kubeAPI{cfg: cfg, hc: hc}, nil
}

// client returns the REST client, making it on first use.
func (a *kubeAPI) client() (*rest.RESTClient, error) {
	a.once.Do(func() {
		codecs, _ := coreScheme()
		cfg := a.cfg
		cfg.NegotiatedSerializer = codecs.WithoutConversion()
		a.rc, a.err = rest.RESTClientForConfigAndClient(&cfg, a.hc)
	})
	return a.rc, a.err
}

// CoreV1 returns the core/v1 resources.
func (a *kubeAPI) CoreV1() coreV1 { return coreV1{api: a} }

// Discovery returns the server version reader.
func (a *kubeAPI) Discovery() discovery { return discovery{api: a} }

type coreV1 struct{ api *kubeAPI }

func (c coreV1) Namespaces() typed[*corev1.Namespace, *corev1.NamespaceList] {
	return typed[*corev1.Namespace, *corev1.NamespaceList]{api: c.api, resource: "namespaces",
		newObj: func() *corev1.Namespace { return &corev1.Namespace{} }, newList: func() *corev1.NamespaceList { return &corev1.NamespaceList{} }}
}

func (c coreV1) ResourceQuotas(ns string) typed[*corev1.ResourceQuota, *corev1.ResourceQuotaList] {
	return typed[*corev1.ResourceQuota, *corev1.ResourceQuotaList]{api: c.api, resource: "resourcequotas", ns: ns,
		newObj: func() *corev1.ResourceQuota { return &corev1.ResourceQuota{} }, newList: func() *corev1.ResourceQuotaList { return &corev1.ResourceQuotaList{} }}
}

func (c coreV1) Pods(ns string) typed[*corev1.Pod, *corev1.PodList] {
	return typed[*corev1.Pod, *corev1.PodList]{api: c.api, resource: "pods", ns: ns,
		newObj: func() *corev1.Pod { return &corev1.Pod{} }, newList: func() *corev1.PodList { return &corev1.PodList{} }}
}

func (c coreV1) PersistentVolumeClaims(ns string) typed[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList] {
	return typed[*corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaimList]{api: c.api, resource: "persistentvolumeclaims", ns: ns,
		newObj:  func() *corev1.PersistentVolumeClaim { return &corev1.PersistentVolumeClaim{} },
		newList: func() *corev1.PersistentVolumeClaimList { return &corev1.PersistentVolumeClaimList{} }}
}

// object is a Kubernetes object of one kind (T is a pointer type such as *corev1.Namespace).
type object interface {
	runtime.Object
	GetName() string
}

// typed is one resource of one namespace ("" = cluster-scoped, or all namespaces for List),
// with the calls and signatures of a generated typed client (client-go's gentype does the same;
// it is not used because it links client-go's fake-client machinery).
type typed[T object, L runtime.Object] struct {
	api      *kubeAPI
	resource string
	ns       string
	newObj   func() T
	newList  func() L
}

// req starts a request of verb on the resource (nil when the client cannot be made).
func (t typed[T, L]) req(verb string) (*rest.Request, runtime.ParameterCodec, error) {
	rc, err := t.api.client()
	if err != nil {
		return nil, nil, err
	}
	_, params := coreScheme()
	return rc.Verb(verb).NamespaceIfScoped(t.ns, t.ns != "").Resource(t.resource), params, nil
}

// Get reads one object.
func (t typed[T, L]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	out := t.newObj()
	r, params, err := t.req(http.MethodGet)
	if err != nil {
		return out, err
	}
	return out, r.Name(name).VersionedParams(&opts, params).Do(ctx).Into(out)
}

// List reads one page of objects.
func (t typed[T, L]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	var timeout time.Duration
	if opts.TimeoutSeconds != nil {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	out := t.newList()
	r, params, err := t.req(http.MethodGet)
	if err != nil {
		return out, err
	}
	return out, r.VersionedParams(&opts, params).Timeout(timeout).Do(ctx).Into(out)
}

// Create creates obj and returns the stored object.
func (t typed[T, L]) Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error) {
	out := t.newObj()
	r, params, err := t.req(http.MethodPost)
	if err != nil {
		return out, err
	}
	return out, r.VersionedParams(&opts, params).Body(obj).Do(ctx).Into(out)
}

// Update replaces obj and returns the stored object.
func (t typed[T, L]) Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	out := t.newObj()
	r, params, err := t.req(http.MethodPut)
	if err != nil {
		return out, err
	}
	return out, r.Name(obj.GetName()).VersionedParams(&opts, params).Body(obj).Do(ctx).Into(out)
}

// Delete deletes one object.
func (t typed[T, L]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	r, _, err := t.req(http.MethodDelete)
	if err != nil {
		return err
	}
	return r.Name(name).Body(&opts).Do(ctx).Error()
}

type discovery struct{ api *kubeAPI }

// ServerVersion reads /version, as client-go's discovery client does.
func (d discovery) ServerVersion() (*version.Info, error) {
	rc, err := d.api.client()
	if err != nil {
		return nil, err
	}
	body, err := rc.Get().AbsPath("/version").Do(context.TODO()).Raw()
	if err != nil {
		return nil, err
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("unable to parse the server version: %w", err)
	}
	return &info, nil
}
