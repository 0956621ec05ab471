package rancher

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/backends"
)

// startPods creates pods (and a PVC) in a resource's namespace once pods are admissible.
func (f *fixture) startPods(t *testing.T, ns string, pods ...*corev1.Pod) {
	t.Helper()
	ctx := ctxT(t)
	if err := f.env.WaitPodsAdmissible(ctx, ns, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if _, err := f.env.Clientset.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("pod %s: %v", p.Name, err)
		}
	}
}

func (f *fixture) startClaim(t *testing.T, ns, name, size string) {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}}}
	if _, err := f.env.Clientset.CoreV1().PersistentVolumeClaims(ns).Create(ctxT(t), pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitUsage polls Usage until it reports want for res (bounded).
func waitUsage(t *testing.T, be backends.Backend, res backends.Resource, want backends.Quantities) {
	t.Helper()
	var last backends.Quantities
	poll(t, time.Minute, "usage "+fmt.Sprint(want), func() (bool, error) {
		got, err := be.(backends.UsageReporter).Usage(ctxT(t), []backends.Resource{res}, backends.PeriodOf(time.Now()), true)
		if err != nil {
			return false, err
		}
		last = got[res.BackendID].Total
		return cmp.Equal(last, want), fmt.Errorf("last usage %v", last)
	})
}

// Usage is read from ResourceQuota status.used as computed by the real resourcequota controller
// from Pending pods: limits for cpu and memory, requests for storage and GPUs.
func TestUsageFromQuotaController(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true})
	be := f.backend(nil)
	res := f.resource(1)
	res.Limits = backends.Quantities{"cpu": 8, "ram": 16, "storage": 50, "gpu": 2, "gpu_h100": 2}
	res = mustCreate(t, be, res)
	ns := f.prefix + "res-1"
	zero := backends.Quantities{"cpu": 0, "ram": 0, "storage": 0, "gpu": 0, "gpu_h100": 0}
	waitUsage(t, be, res, zero)

	a := pod("a", "1500m", "3Gi", map[string]string{"nvidia.com/gpu": "1"})
	a.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"),
		corev1.ResourceMemory: resource.MustParse("1Gi"), "nvidia.com/gpu": resource.MustParse("1")}
	f.startPods(t, ns, a, pod("b", "500m", "512Mi", map[string]string{"nvidia.com/gpu-h100": "2"}))
	f.startClaim(t, ns, "data", "5Gi")
	// cpu and memory count limits (1.5+0.5, 3+0.5), not the 100m/1Gi requests of pod a.
	waitUsage(t, be, res, backends.Quantities{"cpu": 2, "ram": 3.5, "storage": 5, "gpu": 1, "gpu_h100": 2})

	past, err := be.(backends.UsageReporter).Usage(ctxT(t), []backends.Resource{res}, backends.PeriodOf(time.Now()).Prev(), false)
	if err != nil || len(past) != 0 {
		t.Fatalf("past periods have no data: %v %v", past, err)
	}
	other := res
	other.BackendID = f.cluster + ":p-nope1"
	got, err := be.(backends.UsageReporter).Usage(ctxT(t), []backends.Resource{other}, backends.PeriodOf(time.Now()), true)
	if err != nil || len(got) != 0 {
		t.Fatalf("a project without namespaces has no data: %v %v", got, err)
	}
	if err := be.(backends.Provisioner).Delete(ctxT(t), res); err != nil {
		t.Fatal(err)
	}
}

// usage_source: pods sums requests of non-terminal pods (and PVC requests): here less than
// the limits the quota counts.
func TestUsageFromPods(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true})
	be := f.backend(map[string]any{"usage_source": "pods"})
	res := f.resource(1)
	res.Limits = backends.Quantities{"cpu": 8, "ram": 16, "storage": 50, "gpu": 2}
	res = mustCreate(t, be, res)
	ns := f.prefix + "res-1"
	a := pod("a", "2", "4Gi", map[string]string{"nvidia.com/gpu": "1"})
	a.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"),
		corev1.ResourceMemory: resource.MustParse("1Gi"), "nvidia.com/gpu": resource.MustParse("1")}
	f.startPods(t, ns, a, pod("b", "500m", "512Mi", nil))
	f.startClaim(t, ns, "data", "3Gi")
	// b has only limits: the API server defaults its requests to them.
	waitUsage(t, be, res, backends.Quantities{"cpu": 0.75, "ram": 1.5, "storage": 3, "gpu": 1, "gpu_h100": 0})

	// A finished pod no longer counts.
	p, err := f.env.Clientset.CoreV1().Pods(ns).Get(ctxT(t), "b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodSucceeded
	if _, err := f.env.Clientset.CoreV1().Pods(ns).UpdateStatus(ctxT(t), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUsage(t, be, res, backends.Quantities{"cpu": 0.25, "ram": 1, "storage": 3, "gpu": 1, "gpu_h100": 0})
	if err := be.(backends.Provisioner).Delete(ctxT(t), res); err != nil {
		t.Fatal(err)
	}
}

// A GPU-pool offering: the namespace carries gpu-pool (read by the Kyverno policy), the quota
// limits the generic and the typed GPU resources, and typed GPU usage is reported.
func TestGPUOffering(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true})
	be := f.backend(map[string]any{"namespace_labels": map[string]any{"gpu-pool": "h100-2x"}})
	res := f.resource(1)
	res.Limits = backends.Quantities{"cpu": 16, "ram": 64, "gpu": 2, "gpu_h100": 4}
	res = mustCreate(t, be, res)
	ns := f.prefix + "res-1"
	n, err := f.env.Clientset.CoreV1().Namespaces().Get(ctxT(t), ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{"gpu-pool": "h100-2x", psaEnforce: "restricted", psaEnforceVersion: "latest",
		projectIDKey: projectPart(res.BackendID), "kubernetes.io/metadata.name": ns}
	if d := cmp.Diff(wantLabels, n.Labels); d != "" {
		t.Fatalf("namespace labels (-want +got):\n%s", d)
	}
	q, err := f.env.Clientset.CoreV1().ResourceQuotas(ns).Get(ctxT(t), quotaName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := corev1.ResourceList{"limits.cpu": resource.MustParse("16"), "limits.memory": resource.MustParse("64Gi"),
		"requests.nvidia.com/gpu": resource.MustParse("2"), "requests.nvidia.com/gpu-h100": resource.MustParse("4")}
	if !sameHard(q.Spec.Hard, want) {
		t.Fatalf("quota %v, want %v", q.Spec.Hard, want)
	}
	// The quota really limits: a pod asking for more H100s than granted is refused.
	f.startPods(t, ns, pod("fits", "1", "1Gi", map[string]string{"nvidia.com/gpu-h100": "3"}))
	_, err = f.env.Clientset.CoreV1().Pods(ns).Create(ctxT(t), pod("too-big", "1", "1Gi", map[string]string{"nvidia.com/gpu-h100": "2"}), metav1.CreateOptions{})
	if err == nil {
		t.Fatal("the quota admitted 5 of 4 H100 GPUs")
	}
	waitUsage(t, be, res, backends.Quantities{"cpu": 1, "ram": 1, "storage": 0, "gpu": 0, "gpu_h100": 3})
	if err := be.(backends.Provisioner).SetLimits(ctxT(t), res, backends.Quantities{"cpu": 16, "ram": 64, "gpu": 2, "gpu_h100": 8}); err != nil {
		t.Fatal(err)
	}
	got, err := be.(backends.LimitsReader).Limits(ctxT(t), res)
	if err != nil || got["gpu_h100"] != 8 {
		t.Fatalf("limits after update: %v %v", got, err)
	}
	if err := be.(backends.Provisioner).Delete(ctxT(t), res); err != nil {
		t.Fatal(err)
	}
}
