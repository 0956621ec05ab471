package vclusters

import (
	"fmt"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/rancher"
)

// order runs what seed 004 has the tool for: one Create order of the product's rancher backend
// against a virtual cluster in the real Rancher — a project made by Rancher, a GPU-labelled
// namespace and a quota through Rancher's proxy and so through the tunnel — then a pod in it and
// the usage report counting that pod.
func (w *rancherWorld) order(t *testing.T, name, id string) {
	t.Helper()
	ctx := t.Context()
	settings := backends.Settings{"backend_url": w.env.URL, "username": w.key.Access, "password": w.key.Secret,
		"cluster_id": id, "verify_cert": false, "project_prefix": name + "-", "timeout": "30s",
		"namespace_labels": map[string]any{"gpu-pool": "h100-2x"}}
	b, _, err := rancher.New(backends.Params{Offering: "vclusters", Settings: settings, Components: scaleComponents, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	res := backends.Resource{UUID: fmt.Sprintf("%032x", time.Now().UnixNano()), Name: "GPU pool " + name, Slug: "gpu",
		ProjectSlug: "proj", CustomerSlug: "org", Limits: backends.Quantities{"cpu": 4, "ram": 8192, "gpu": 2}}
	began := time.Now()
	created, err := b.(backends.Provisioner).Create(ctx, backends.CreateRequest{Resource: res, Name: "gpu"})
	if err != nil {
		t.Fatalf("%s: create: %v", name, err)
	}
	res.BackendID = created.BackendID
	kube, err := kubernetes.NewForConfig(&rest.Config{Host: w.env.URL + "/k8s/clusters/" + id, BearerToken: w.key.Bearer(),
		TLSClientConfig: rest.TLSClientConfig{Insecure: true}, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ns := name + "-gpu"
	got, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil || got.Labels["gpu-pool"] != "h100-2x" || got.Annotations["field.cattle.io/projectId"] == "" {
		t.Fatalf("%s: namespace %s through the tunnel: %v labels %v annotations %v", name, ns, err, got.Labels, got.Annotations)
	}
	q, err := kube.CoreV1().ResourceQuotas(ns).Get(ctx, "custom-resource-quota", metav1.GetOptions{})
	if err != nil || q.Spec.Hard.Name("requests.nvidia.com/gpu", resource.DecimalSI).Value() != 2 {
		t.Fatalf("%s: quota: %v %v", name, err, q)
	}
	one := corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("1Gi"), "nvidia.com/gpu": resource.MustParse("1")}
	no, yes := false, true
	restricted := &corev1.SecurityContext{AllowPrivilegeEscalation: &no, RunAsNonRoot: &yes,
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job"}, Spec: corev1.PodSpec{NodeName: nodeName(name, 2),
		Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", SecurityContext: restricted,
			Resources: corev1.ResourceRequirements{Requests: one, Limits: one}}}}}
	if _, err := kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("%s: pod: %v", name, err)
	}
	var u backends.Quantities
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Second) {
		usage, err := b.(backends.UsageReporter).Usage(ctx, []backends.Resource{res}, backends.PeriodOf(time.Now()), true)
		if err != nil {
			t.Fatalf("%s: usage: %v", name, err)
		}
		if u = usage[res.BackendID].Total; u["cpu"] == 1 && u["gpu"] == 1 && u["ram"] > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: usage %v, want cpu 1, gpu 1 and some ram", name, u)
		}
	}
	t.Logf("%s: the rancher backend's order (project, namespace, quota) and a pod counted in its usage in %s", name, time.Since(began).Round(time.Millisecond))
}
