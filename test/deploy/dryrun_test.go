package deploy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/waldur/site-agent/internal/leader"
	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

func TestMain(m *testing.M) { os.Exit(kubeenv.Main(m)) }

// warnings collects the API server's warnings (Pod Security findings among them).
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

// applier applies manifests with a server-side dry run: the API server validates every field
// (strictly: unknown fields are errors), runs admission (Pod Security included) and stores
// nothing.
type applier struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
	warn   *warnings
	ns     string
}

func newApplier(t *testing.T, env *kubeenv.Env, ns string) *applier {
	t.Helper()
	w := &warnings{}
	rc := rest.CopyConfig(env.Config)
	rc.WarningHandler = w
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return &applier{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)), warn: w, ns: ns}
}

func (a *applier) dryRun(ctx context.Context, o *unstructured.Unstructured) error {
	gvk := o.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	data, err := o.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = a.dyn.Resource(m.Resource).Namespace(a.ns).Patch(ctx, o.GetName(), types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: "site-agent-chart-test", DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
	return err
}

// installCRDs creates the stand-in CRDs of the Prometheus operator (ServiceMonitor,
// PrometheusRule) for real and waits until they are served.
func installCRDs(t *testing.T, a *applier) {
	t.Helper()
	for _, file := range []string{"servicemonitor-crd.yaml", "prometheusrule-crd.yaml"} {
		installCRD(t, a, file)
	}
	a.mapper.Reset()
}

func installCRD(t *testing.T, a *applier, file string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	crd := decode(t, string(data))[0]
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	body, _ := crd.MarshalJSON()
	if _, err := a.dyn.Resource(gvr).Patch(t.Context(), crd.GetName(), types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: "site-agent-chart-test"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		u, err := a.dyn.Resource(gvr).Get(t.Context(), crd.GetName(), metav1.GetOptions{})
		if err == nil && established(u) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not established: %v", crd.GetName(), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// TestHelmManifestsServerSideDryRun applies the rendered chart (defaults, and two replicas with
// leader election, a ServiceMonitor, the PrometheusRule and the dashboard) to a real kube-apiserver with a server-side dry run, in a
// namespace enforcing the restricted Pod Security profile: no error, no warning. A mutated
// manifest shows that the dry run really validates.
func TestHelmManifestsServerSideDryRun(t *testing.T) {
	helm(t)
	env := kubeenv.Shared(t)
	ns := env.Namespace(t, "chart", map[string]string{"pod-security.kubernetes.io/enforce": "restricted",
		"pod-security.kubernetes.io/warn": "restricted"})
	a := newApplier(t, env, ns)
	installCRDs(t, a)
	for name, args := range map[string][]string{
		"defaults": nil,
		"ha":       {"--values", filepath.Join(chart, "ci", "ha-values.yaml")},
	} {
		t.Run(name, func(t *testing.T) {
			objs := render(t, append([]string{"--namespace", ns}, args...)...)
			for _, o := range objs {
				if err := a.dryRun(t.Context(), o); err != nil {
					t.Errorf("%s %s: %v", o.GetKind(), o.GetName(), err)
				}
				if w := a.warn.take(); len(w) > 0 {
					t.Errorf("%s %s: warnings %v", o.GetKind(), o.GetName(), w)
				}
			}
		})
	}
	t.Run("a broken manifest is refused", func(t *testing.T) {
		d := find(render(t, "--namespace", ns), "Deployment")
		containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		containers[0].(map[string]any)["livenessProbee"] = map[string]any{}
		_ = unstructured.SetNestedSlice(d.Object, containers, "spec", "template", "spec", "containers")
		if err := a.dryRun(t.Context(), d); err == nil || !strings.Contains(err.Error(), "livenessProbee") {
			t.Fatalf("an unknown field was accepted: %v", err)
		}
		rule := find(render(t, "--namespace", ns, "--set", "metrics.prometheusRule.enabled=true"), "PrometheusRule")
		groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
		rules := groups[0].(map[string]any)["rules"].([]any)
		rules[0].(map[string]any)["for"] = "soon"
		_ = unstructured.SetNestedSlice(rule.Object, groups, "spec", "groups")
		if err := a.dryRun(t.Context(), rule); err == nil || !strings.Contains(err.Error(), "for") {
			t.Fatalf("a rule with for: soon was accepted: %v", err)
		}
		root := find(render(t, "--namespace", ns, "--set", "securityContext.runAsNonRoot=false,securityContext.runAsUser=0"), "Deployment")
		_ = a.dryRun(t.Context(), root)
		if w := strings.Join(a.warn.take(), " "); !strings.Contains(w, "restricted") {
			t.Fatalf("a root container drew no Pod Security warning: %q", w)
		}
	})
}

// TestHelmRBACAllowsLeaderElection applies the chart's ServiceAccount, Role and RoleBinding for
// real, then campaigns with that ServiceAccount's token: the grant is enough to lead, and
// nothing more (the account cannot read Secrets).
func TestHelmRBACAllowsLeaderElection(t *testing.T) {
	helm(t)
	env := kubeenv.Shared(t)
	ns := env.Namespace(t, "rbac", nil)
	a := newApplier(t, env, ns)
	var lease string
	for _, o := range render(t, "--namespace", ns, "--values", filepath.Join(chart, "ci", "ha-values.yaml")) {
		switch o.GetKind() {
		case "ServiceAccount", "Role", "RoleBinding":
			if err := a.apply(t.Context(), o); err != nil {
				t.Fatalf("%s: %v", o.GetKind(), err)
			}
		case "Deployment":
			lease = o.GetName() // the chart's default lease name is the full name
		}
	}
	tr, err := env.Clientset.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), "agent-site-agent",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rc := &rest.Config{Host: env.Host, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: env.CAData},
		WarningHandler: rest.NoWarnings{}}
	el, err := leader.New(leader.Config{Namespace: ns, Name: lease, Identity: "pod-0", LeaseDuration: 3 * time.Second,
		RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond, REST: rc}, zap.NewNop(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	led := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_ = el.Run(ctx, func(fence context.Context) { close(led); <-ctx.Done() })
	}()
	select {
	case <-led:
	case <-time.After(20 * time.Second):
		t.Fatal("the chart's ServiceAccount could not acquire the lease")
	}
	cancel()
	<-stopped
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets(ns).List(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("the ServiceAccount may list Secrets (err %v): the Role grants more than leases", err)
	}
}

// apply creates or updates an object for real (server-side apply).
func (a *applier) apply(ctx context.Context, o *unstructured.Unstructured) error {
	gvk := o.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	data, err := o.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = a.dyn.Resource(m.Resource).Namespace(a.ns).Patch(ctx, o.GetName(), types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: "site-agent-chart-test", FieldValidation: "Strict"})
	return err
}
