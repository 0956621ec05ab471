package vclusters

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/rancher"
)

// scaleClusters is how many virtual clusters the scale test makes (SITE_AGENT_VC_SCALE
// overrides the 100, e.g. for a quick local run).
func scaleClusters(t testing.TB) int {
	if v := os.Getenv("SITE_AGENT_VC_SCALE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("SITE_AGENT_VC_SCALE=%q", v)
		}
		return n
	}
	return 100
}

var scaleComponents = backends.Components{
	{Name: "cpu", UnitFactor: 1, Settings: map[string]any{"type": "cpu"}},
	{Name: "ram", UnitFactor: 1, Settings: map[string]any{"type": "ram"}},
	{Name: "gpu", UnitFactor: 1, Settings: map[string]any{"type": "gpu"}},
}

// The tier-2 scenario: 100 virtual clusters of 3 Nodes and 10 Pods, created through the
// API, imported and connected; then the product's rancher backend makes a project, a
// GPU-labelled namespace and a quota in every one of them — every Kubernetes call travelling
// its cluster's tunnel — and reports usage from them; a cluster deleted in Rancher is cleaned up.
func TestRealHundredClustersWithTheRancherBackend(t *testing.T) {
	n := scaleClusters(t)
	w := newRealWorld(t, func(c *Config) { c.SetupConcurrency, c.Sync.PodResourcesInterval = 16, 2*time.Second })
	names := make([]string, n)
	began := time.Now()
	for i := range names {
		names[i] = w.name(fmt.Sprintf("s%03d", i))
	}
	w.create(names...)
	w.connected(5*time.Minute, names...)
	t.Logf("%d clusters created and connected in %s", n, time.Since(began).Round(time.Millisecond))
	w.requested(30*time.Second, names...)

	began = time.Now()
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(8)
	for i, name := range names {
		g.Go(func() error { return w.orderOnCluster(ctx, i, name) })
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	t.Logf("the rancher backend made a project, namespace, quota and pod in %d clusters and read their usage in %s", n, time.Since(began).Round(time.Millisecond))

	gone := names[n/2]
	info, _ := w.sim.ClusterByName(gone)
	w.sim.DeleteCluster(info.ID)
	waitForLong(t, 30*time.Second, "the cluster deleted in rancher to be removed", func() bool { _, ok := w.m.Get(gone); return !ok })
	w.tenantGone(gone)
	if got := len(w.m.List()); got != n-1 {
		t.Errorf("%d clusters left, want %d", got, n-1)
	}
}

// orderOnCluster runs one Create order's worth of the rancher backend against cluster name,
// puts a pod in the new namespace through Rancher's proxy, and checks the reported usage.
func (w *realWorld) orderOnCluster(ctx context.Context, i int, name string) error {
	info, _ := w.sim.ClusterByName(name)
	settings := backends.Settings{"backend_url": w.srv.URL, "username": "token-sim01", "password": "sim-secret",
		"cluster_id": info.ID, "verify_cert": false, "project_prefix": name + "-", "timeout": "30s",
		"namespace_labels": map[string]any{"gpu-pool": "h100-2x"}}
	b, _, err := rancher.New(backends.Params{Offering: "scale", Settings: settings, Components: scaleComponents, Logger: zaptest.NewLogger(w.t)})
	if err != nil {
		return err
	}
	prov := b.(backends.Provisioner)
	res := backends.Resource{UUID: fmt.Sprintf("%032x", i+1), Name: "GPU pool " + name, Slug: "gpu",
		ProjectSlug: "proj", CustomerSlug: "org", Limits: backends.Quantities{"cpu": 4, "ram": 8192, "gpu": 2}}
	created, err := prov.Create(ctx, backends.CreateRequest{Resource: res, Name: "gpu"})
	if err != nil {
		return fmt.Errorf("%s: create: %w", name, err)
	}
	res.BackendID = created.BackendID
	ns := name + "-gpu"
	kube, err := w.throughRancher(info.ID)
	if err != nil {
		return err
	}
	got, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil || got.Labels["gpu-pool"] != "h100-2x" {
		return fmt.Errorf("%s: namespace %s through the tunnel: %v %v", name, ns, err, got.Labels)
	}
	q, err := kube.CoreV1().ResourceQuotas(ns).Get(ctx, "custom-resource-quota", metav1.GetOptions{})
	if err != nil || q.Spec.Hard.Name("requests.nvidia.com/gpu", resource.DecimalSI).Value() != 2 {
		return fmt.Errorf("%s: quota: %v %v", name, err, q)
	}
	one := corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("1Gi"), "nvidia.com/gpu": resource.MustParse("1")}
	no, yes := false, true
	restricted := &corev1.SecurityContext{AllowPrivilegeEscalation: &no, RunAsNonRoot: &yes, // the namespace enforces "restricted"
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job"}, Spec: corev1.PodSpec{NodeName: nodeName(name, 2),
		Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", SecurityContext: restricted,
			Resources: corev1.ResourceRequirements{Requests: one, Limits: one}}}}}
	if _, err := kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: pod: %w", name, err)
	}
	// A quota made a moment before the pod may not charge it at admission; the resourcequota
	// controller recounts within seconds (as on a real cluster).
	var u backends.Quantities
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		usage, err := b.(backends.UsageReporter).Usage(ctx, []backends.Resource{res}, backends.PeriodOf(time.Now()), true)
		if err != nil {
			return fmt.Errorf("%s: usage: %w", name, err)
		}
		if u = usage[res.BackendID].Total; u["cpu"] == 1 && u["gpu"] == 1 && u["ram"] > 0 {
			return nil
		}
	}
	return fmt.Errorf("%s: usage %v, want cpu 1, gpu 1 and some ram", name, u)
}

// throughRancher is a Kubernetes client for a cluster through Rancher's /k8s/clusters proxy.
func (w *realWorld) throughRancher(id string) (kubernetes.Interface, error) {
	return kubernetes.NewForConfig(&rest.Config{Host: w.srv.URL + "/k8s/clusters/" + id, BearerToken: w.sim.Token(),
		TLSClientConfig: rest.TLSClientConfig{Insecure: true}, Timeout: 30 * time.Second})
}
