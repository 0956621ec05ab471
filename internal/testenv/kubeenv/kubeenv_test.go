package kubeenv_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

func TestMain(m *testing.M) { os.Exit(kubeenv.Main(m)) }

// TestResourceQuotaUsedByRealController walks the Rancher backend's enforcement path: a labelled
// namespace, a ResourceQuota with the four keys site-agent maps components to, and a Pending pod
// whose limits the real resourcequota controller adds up into status.used.
func TestResourceQuotaUsedByRealController(t *testing.T) {
	env := kubeenv.Shared(t)
	t.Logf("shared control plane ready in %v; RSS %v", env.StartupTime.Round(time.Millisecond), rssMiB(env))
	ctx, cs := t.Context(), env.Clientset
	labels := map[string]string{"gpu-pool": "h100-2x", "waldur-resource": "r-1"}
	ns := env.Namespace(t, "quota", labels)

	gotNS, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get namespace: %v", err)
	}
	for k, v := range labels {
		if gotNS.Labels[k] != v {
			t.Errorf("namespace label %s = %q, want %q", k, gotNS.Labels[k], v)
		}
	}

	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "custom-resource-quota", Namespace: ns},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			"limits.cpu":              resource.MustParse("4000m"),
			"limits.memory":           resource.MustParse("8192Mi"),
			"requests.storage":        resource.MustParse("102400Mi"),
			"requests.nvidia.com/gpu": resource.MustParse("2"),
		}},
	}
	if _, err := cs.CoreV1().ResourceQuotas(ns).Create(ctx, quota, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create quota: %v", err)
	}
	if err := env.WaitQuotaSynced(ctx, ns, quota.Name, 30*time.Second); err != nil {
		t.Fatalf("quota never processed by the controller: %v", err)
	}
	if err := env.WaitPodsAdmissible(ctx, ns, 30*time.Second); err != nil {
		t.Fatalf("namespace %s never got its default ServiceAccount: %v", ns, err)
	}
	pod := gpuPod(ns)
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	gotPod, err := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get pod: %v", err)
	}
	if gotPod.Status.Phase != corev1.PodPending {
		t.Errorf("pod phase = %q, want Pending (no scheduler or kubelet)", gotPod.Status.Phase)
	}

	used := waitQuotaUsed(t, cs, ns, map[string]string{
		"limits.cpu": "1500m", "limits.memory": "3Gi", "requests.nvidia.com/gpu": "1", "requests.storage": "0",
	})
	// The conversion the Rancher backend uses for usage reports (spec/rancher.md §1.6).
	cpu, mem := used["limits.cpu"], used["limits.memory"]
	if cores, gib := float64(cpu.MilliValue())/1000, float64(mem.Value())/(1<<30); cores != 1.5 || gib != 3 {
		t.Errorf("usage conversion: cores=%v GiB=%v, want 1.5 and 3", cores, gib)
	}

	if err := cs.CoreV1().Pods(ns).Delete(ctx, pod.Name, *metav1.NewDeleteOptions(0)); err != nil {
		t.Fatalf("delete pod: %v", err)
	}
	waitQuotaUsed(t, cs, ns, map[string]string{
		"limits.cpu": "0", "limits.memory": "0", "requests.nvidia.com/gpu": "0", "requests.storage": "0",
	})
}

func gpuPod(ns string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-job", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:  "main",
			Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("1500m"),
				corev1.ResourceMemory: resource.MustParse("3Gi"),
				"nvidia.com/gpu":      resource.MustParse("1"),
			}},
		}}},
	}
}

// waitQuotaUsed polls (≤ 30 s) until the quota's status.used equals want (canonical quantity
// strings) and returns it.
func waitQuotaUsed(t *testing.T, cs kubernetes.Interface, ns string, want map[string]string) corev1.ResourceList {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var diff string
	for {
		q, err := cs.CoreV1().ResourceQuotas(ns).Get(t.Context(), "custom-resource-quota", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get quota: %v", err)
		}
		got := make(map[string]string, len(q.Status.Used))
		for k, v := range q.Status.Used {
			got[string(k)] = v.String()
		}
		if diff = cmp.Diff(want, got); diff == "" {
			return q.Status.Used
		}
		if time.Now().After(deadline) {
			t.Fatalf("quota status.used not reached within 30s (-want +got):\n%s", diff)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func rssMiB(env *kubeenv.Env) map[string]string {
	out := map[string]string{}
	for name, b := range env.RSS() {
		out[name] = fmt.Sprintf("%d MiB", b>>20)
	}
	return out
}
