package kubeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
)

// Scheme is a runtime scheme of a few API groups, built once at first use.
type Scheme struct {
	add    []func(*runtime.Scheme) error
	once   sync.Once
	s      *runtime.Scheme
	codecs serializer.CodecFactory
	pc     runtime.ParameterCodec
}

// NewScheme returns a scheme of the groups add registers (generated AddToScheme functions) plus
// the meta/v1 types every group shares (options, Status), as client-go's scheme package has.
func NewScheme(add ...func(*runtime.Scheme) error) *Scheme { return &Scheme{add: add} }

func (s *Scheme) build() (*runtime.Scheme, serializer.CodecFactory, runtime.ParameterCodec) {
	s.once.Do(func() {
		rs := runtime.NewScheme()
		metav1.AddToGroupVersion(rs, schema.GroupVersion{Version: "v1"})
		for _, f := range s.add {
			if err := f(rs); err != nil {
				panic("kubeapi: scheme registration: " + err.Error()) // generated code; cannot fail
			}
		}
		s.s, s.codecs, s.pc = rs, serializer.NewCodecFactory(rs), runtime.NewParameterCodec(rs)
	})
	return s.s, s.codecs, s.pc
}

// Runtime returns the scheme itself (e.g. to decode manifests with its deserializer).
func (s *Scheme) Runtime() *runtime.Scheme { r, _, _ := s.build(); return r }

// Codecs returns the scheme's codec factory.
func (s *Scheme) Codecs() serializer.CodecFactory { _, c, _ := s.build(); return c }

func (s *Scheme) params() runtime.ParameterCodec { _, _, p := s.build(); return p }

// Group is a REST client for one API group and version, made at its first call.
type Group struct {
	cfg    rest.Config
	hc     *http.Client
	scheme *Scheme

	once sync.Once
	rc   *rest.RESTClient
	err  error
}

// NewGroup returns the client of gv on the server of c (defaults as client-go's generated
// clients set them). Clients of one server should share hc (rest.HTTPClientFor(c)); nil makes
// one. The HTTP client is made now, so a configuration it cannot use is reported at start-up.
func NewGroup(c *rest.Config, hc *http.Client, gv schema.GroupVersion, s *Scheme) (*Group, error) {
	cfg := *c
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	if gv.Group == "" {
		cfg.APIPath = "/api"
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	if hc == nil {
		var err error
		if hc, err = rest.HTTPClientFor(&cfg); err != nil {
			return nil, err
		}
	}
	return &Group{cfg: cfg, hc: hc, scheme: s}, nil
}

// REST returns the REST client, making it (and the scheme) on first use.
func (g *Group) REST() (*rest.RESTClient, error) {
	g.once.Do(func() {
		cfg := g.cfg
		cfg.NegotiatedSerializer = g.scheme.Codecs().WithoutConversion()
		g.rc, g.err = rest.RESTClientForConfigAndClient(&cfg, g.hc)
	})
	return g.rc, g.err
}

// ServerVersion reads /version, as client-go's discovery client does.
func (g *Group) ServerVersion(ctx context.Context) (*version.Info, error) {
	rc, err := g.REST()
	if err != nil {
		return nil, err
	}
	body, err := rc.Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("unable to parse the server version: %w", err)
	}
	return &info, nil
}
