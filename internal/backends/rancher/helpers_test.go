package rancher

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/clients/keycloak"
	"github.com/waldur/site-agent/internal/sim/keycloaksim"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/testenv/kubeenv"
	"github.com/waldur/site-agent/internal/upstream"
)

func TestMain(m *testing.M) { os.Exit(kubeenv.Main(m)) }

var fixtures atomic.Int64

// fixtureOpts choose the servers behind a backend under test.
type fixtureOpts struct {
	kube     bool // a real Kubernetes API server behind the Rancher simulator
	keycloak bool // a Keycloak simulator, keycloak_enabled: true
	// removeDelay is how long Rancher lists a deleted project or binding (the simulator's
	// default when 0)
	removeDelay time.Duration
}

// fixture is one test's world: a Rancher simulator (TLS, verify_cert: false), optionally in
// front of the shared real kube-apiserver, and optionally a Keycloak simulator. Cluster id and
// project prefix are unique per fixture, so tests sharing the API server do not meet.
type fixture struct {
	t        testing.TB
	rs       *ranchersim.Server
	kc       *keycloaksim.Server
	env      *kubeenv.Env
	cluster  string
	other    string // a second cluster behind the same Rancher
	prefix   string
	settings map[string]any
	logger   *zap.Logger // when set, backends log here instead of to the test log
}

func newFixture(t testing.TB, o fixtureOpts) *fixture {
	t.Helper()
	h := fnv.New32a()
	fmt.Fprintf(h, "%s#%d", t.Name(), fixtures.Add(1)) // benchmarks run the same name several times
	id := fmt.Sprintf("%08x", h.Sum32())
	f := &fixture{t: t, cluster: "c-m-" + id, other: "c-m-o" + id[1:], prefix: "t" + id[:6] + "-"}
	var up *ranchersim.Upstream
	if o.kube {
		f.env = kubeenv.Shared(t)
		up = &ranchersim.Upstream{Host: f.env.Host, Token: f.env.Token, CAData: f.env.CAData}
	}
	f.rs = ranchersim.New(ranchersim.Options{Clusters: []string{f.cluster, f.other}, Upstream: up, Seed: int64(h.Sum32()), RemoveDelay: o.removeDelay})
	srv := httptest.NewTLSServer(f.rs)
	t.Cleanup(srv.Close)
	f.settings = map[string]any{
		"backend_url": srv.URL, "username": "token-sim01", "password": "sim-secret", "cluster_id": f.cluster,
		"verify_cert": false, "project_prefix": f.prefix, "timeout": "20s",
	}
	if o.keycloak {
		f.kc = keycloaksim.New(keycloaksim.Options{})
		ks := httptest.NewServer(f.kc)
		t.Cleanup(ks.Close)
		f.settings["keycloak_enabled"] = true
		f.settings["keycloak"] = map[string]any{"keycloak_url": ks.URL + "/", "keycloak_username": "admin", "keycloak_password": "admin"}
	}
	t.Cleanup(func() {
		if !t.Failed() {
			f.rs.AssertNoViolations(t)
		}
	})
	return f
}

var testComps = backends.Components{
	{Name: "cpu", UnitFactor: 1, Settings: map[string]any{"type": "cpu"}},
	{Name: "ram", UnitFactor: 1, Settings: map[string]any{"type": "ram"}},
	{Name: "storage", UnitFactor: 1, Settings: map[string]any{"type": "storage"}},
	{Name: "gpu", UnitFactor: 1, Settings: map[string]any{"type": "gpu"}},
	{Name: "gpu_h100", UnitFactor: 1, Settings: map[string]any{"type": "gpu", "k8s_resource": "nvidia.com/gpu-h100"}},
	{Name: "pods", UnitFactor: 1, Settings: map[string]any{"type": "pods"}},
}

// backend builds the backend from the fixture's settings plus extra.
func (f *fixture) backend(extra map[string]any, opts ...Option) backends.Backend {
	f.t.Helper()
	s := map[string]any{}
	for k, v := range f.settings {
		s[k] = v
	}
	for k, v := range extra {
		s[k] = v
	}
	log := f.logger
	if log == nil {
		log = zaptest.NewLogger(f.t)
	}
	b, warnings, err := NewWithOptions(backends.Params{Offering: "test", Settings: s, Components: testComps, Logger: log},
		[]keycloak.Option{keycloak.WithRetry(6, 5*time.Millisecond, 50*time.Millisecond)}, opts...)
	if err != nil {
		f.t.Fatalf("new backend: %v", err)
	}
	if len(warnings) > 0 {
		f.t.Fatalf("unexpected warnings: %v", warnings)
	}
	core(b).retryFast()
	return b
}

// core returns the *Backend inside either variant.
func core(b backends.Backend) *Backend {
	switch v := b.(type) {
	case *Backend:
		return v
	case *WithKeycloak:
		return v.Backend
	}
	panic(fmt.Sprintf("not a rancher backend: %T", b))
}

// newPass forgets what a pass caches (cluster listing, member lists), as the next pass finds
// them expired.
func (b *Backend) newPass() {
	b.invalidate()
	b.kcMu.Lock()
	b.snaps = map[string]memberSnap{}
	b.kcMu.Unlock()
}

// retryFast shortens backoff so fault tests run quickly.
func (b *Backend) retryFast() {
	retries := 8
	fast := func(name string) upstream.Settings {
		s := b.cfg.settingsFor(name)
		s.Retries, s.BackoffMin, s.BackoffMax = &retries, 2*time.Millisecond, 20*time.Millisecond
		return s
	}
	var err error
	if b.v3, err = newRancherClient(b.cfg, fast(upstream.Rancher), b.log); err != nil {
		panic(err)
	}
	if b.kube, err = newKubeClient(b.v3, b.cfg.clusterID, fast(upstream.Kubernetes)); err != nil {
		panic(err)
	}
}

// resource returns a test resource in Waldur project "proj-<n%3>".
func (f *fixture) resource(n int) backends.Resource {
	return backends.Resource{UUID: fmt.Sprintf("%032x", n+1000*int(fnv32(f.t.Name())%1000)), Name: fmt.Sprintf("Resource %d", n),
		Slug: fmt.Sprintf("res-%d", n), ProjectSlug: "proj", ProjectName: "Project", CustomerSlug: "cust", CustomerName: "Customer",
		Limits: backends.Quantities{"cpu": 2, "ram": 4, "storage": 10, "gpu": 1}}
}

func fnv32(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func mustCreate(t testing.TB, b backends.Backend, res backends.Resource, members ...backends.Member) backends.Resource {
	t.Helper()
	info, err := b.(backends.Provisioner).Create(ctxT(t), backends.CreateRequest{Resource: res, Name: res.Slug, Members: members})
	if err != nil {
		t.Fatalf("create %s: %v", res.Slug, err)
	}
	res.BackendID = info.BackendID
	return res
}

// pod is a restricted-profile pod asking for resources (it stays Pending: no scheduler).
func pod(name string, cpu, mem string, extra map[string]string) *corev1.Pod {
	limits := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	for k, v := range extra {
		limits[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	no, yes := false, true
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "c", Image: "registry.example/idle:1",
				Resources: corev1.ResourceRequirements{Limits: limits},
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, RunAsNonRoot: &yes,
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
		},
	}
}

// poll waits (bounded) for cond.
func poll(t testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, last)
}
