package vclusters

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The annotations are what rancher's podresources controller writes: sums of the containers'
// requests and limits, an init container counting with the largest, and the Pod count.
func TestPodResourceAnnotationsAreTheAgents(t *testing.T) {
	rl := func(kv ...string) corev1.ResourceList {
		out := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return out
	}
	pod := func(init corev1.ResourceList, containers ...corev1.ResourceRequirements) *corev1.Pod {
		p := &corev1.Pod{}
		for _, r := range containers {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Resources: r})
		}
		if init != nil {
			p.Spec.InitContainers = []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: init}}}
		}
		return p
	}
	for _, tc := range []struct {
		name             string
		pods             []*corev1.Pod
		requests, limits string
	}{
		{"no pods", nil, `{}`, `{}`},
		{"template pods", []*corev1.Pod{
			pod(nil, corev1.ResourceRequirements{Requests: rl("cpu", "100m", "memory", "128Mi")}),
			pod(nil, corev1.ResourceRequirements{Requests: rl("cpu", "100m", "memory", "128Mi")}),
		}, `{"cpu":"200m","memory":"256Mi","pods":"2"}`, `{}`},
		{"two containers with limits, and an init container larger than them", []*corev1.Pod{
			pod(rl("cpu", "2"),
				corev1.ResourceRequirements{Requests: rl("cpu", "500m"), Limits: rl("cpu", "1", "nvidia.com/gpu", "1")},
				corev1.ResourceRequirements{Requests: rl("cpu", "250m"), Limits: rl("memory", "1Gi")}),
		}, `{"cpu":"2","pods":"1"}`, `{"cpu":"1","memory":"1Gi","nvidia.com/gpu":"1"}`},
	} {
		req, lim := podResourceAnnotations(tc.pods)
		if req != tc.requests || lim != tc.limits {
			t.Errorf("%s: requests %s limits %s, want %s and %s", tc.name, req, lim, tc.requests, tc.limits)
		}
	}
}
