package vclusters

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/testenv/kubeenv"
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
	pod := func(init corev1.ResourceList, containers ...corev1.ResourceRequirements) *PodResources {
		p := &PodResources{}
		for _, r := range containers {
			p.Spec.Containers = append(p.Spec.Containers, ContainerResources{Resources: r})
		}
		if init != nil {
			p.Spec.InitContainers = []ContainerResources{{Resources: corev1.ResourceRequirements{Requests: init}}}
		}
		return p
	}
	for _, tc := range []struct {
		name             string
		pods             []*PodResources
		requests, limits string
	}{
		{"no pods", nil, `{}`, `{}`},
		{"template pods", []*PodResources{
			pod(nil, corev1.ResourceRequirements{Requests: rl("cpu", "100m", "memory", "128Mi")}),
			pod(nil, corev1.ResourceRequirements{Requests: rl("cpu", "100m", "memory", "128Mi")}),
		}, `{"cpu":"200m","memory":"256Mi","pods":"2"}`, `{}`},
		{"two containers with limits, and an init container larger than them", []*PodResources{
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

// Tier 2: the pod-resources loop's lean list reads from the real API server what a typed list
// has of the fields it needs, and costs a fraction of a typed list's allocations (at 1,000
// clusters the loop lists 10,000 Pods every 15 s).
func TestRealPodResourcesListIsFaithfulAndLean(t *testing.T) {
	env := kubeenv.Shared(t)
	if env == nil {
		return
	}
	ctx := context.Background()
	core := env.Clientset.CoreV1()
	ns := testNamespace(t, env, "podres")
	const pods = 60
	for i := range pods {
		if _, err := core.Pods(ns).Create(ctx, resourcePod(i, ns+"-node-"+fmt.Sprint(i%3)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setPodPhase(t, env, ns, "p0", corev1.PodSucceeded)
	k, err := NewKube(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	byNode := map[string][]*PodResources{}
	leanPerPod := allocatedPerItem(t, func() int {
		list, err := k.ListPodResources(ctx, "metadata.namespace="+ns)
		if err != nil {
			t.Fatal(err)
		}
		clear(byNode)
		for i := range list {
			if p := &list[i]; p.Counts() {
				byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
			}
		}
		return len(list)
	})
	typedPerPod := allocatedPerItem(t, func() int {
		list, err := k.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		return len(list.Items)
	})
	// 20 Pods per Node, p0 (node 0) Succeeded; each Pod: 150m + 100m requested, the init
	// container's 1 cpu larger than both; limits 300m + memory 256Mi.
	for node, want := range map[int][2]string{
		0: {`{"cpu":"19","memory":"2432Mi","pods":"19"}`, `{"cpu":"5700m","memory":"4864Mi"}`},
		1: {`{"cpu":"20","memory":"2560Mi","pods":"20"}`, `{"cpu":"6","memory":"5Gi"}`},
	} {
		req, lim := podResourceAnnotations(byNode[ns+"-node-"+fmt.Sprint(node)])
		if req != want[0] || lim != want[1] {
			t.Errorf("node %d: requests %s limits %s, want %s and %s", node, req, lim, want[0], want[1])
		}
	}
	t.Logf("allocated per pod: lean list %.0f B, typed list %.0f B", leanPerPod, typedPerPod)
	if leanPerPod*3 > typedPerPod {
		t.Errorf("the lean list allocates %.0f B per pod, the typed list %.0f B: not lean", leanPerPod, typedPerPod)
	}
}

// testNamespace makes a namespace named prefix-<number>, deleted when the test ends.
func testNamespace(t *testing.T, env *kubeenv.Env, prefix string) string {
	t.Helper()
	ns := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1e9)
	core := env.Clientset.CoreV1()
	if _, err := core.Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = core.Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	return ns
}

// setPodPhase writes the Pod's phase into its status, as a kubelet would.
func setPodPhase(t *testing.T, env *kubeenv.Env, ns, name string, phase corev1.PodPhase) {
	t.Helper()
	ctx, pods := context.Background(), env.Clientset.CoreV1().Pods(ns)
	p, err := pods.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = phase
	if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// resourcePod is a Pod of the template's shape, bound to node: two containers and an init one.
func resourcePod(i int, node string) *corev1.Pod {
	rl := func(kv ...string) corev1.ResourceList {
		out := corev1.ResourceList{}
		for j := 0; j < len(kv); j += 2 {
			out[corev1.ResourceName(kv[j])] = resource.MustParse(kv[j+1])
		}
		return out
	}
	c := func(name, cpu, mem string) corev1.Container {
		return corev1.Container{Name: name, Image: "registry.k8s.io/pause:3.10", Env: []corev1.EnvVar{{Name: "N", Value: fmt.Sprint(i)}},
			Resources: corev1.ResourceRequirements{Requests: rl("cpu", cpu, "memory", mem), Limits: rl("cpu", "150m", "memory", "128Mi")}}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Labels: map[string]string{"app": "podres", "i": fmt.Sprint(i)}},
		Spec: corev1.PodSpec{NodeName: node,
			Containers: []corev1.Container{c("a", "150m", "64Mi"), c("b", "100m", "64Mi")},
			InitContainers: []corev1.Container{{Name: "init", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1", "memory", "128Mi")}}}},
	}
}

// allocatedPerItem is the fewest bytes f allocated per item it returned over three runs.
func allocatedPerItem(t *testing.T, f func() int) float64 {
	t.Helper()
	best := math.Inf(1)
	for range 3 {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		n := f()
		runtime.ReadMemStats(&after)
		if n == 0 {
			t.Fatal("listed nothing")
		}
		best = min(best, float64(after.TotalAlloc-before.TotalAlloc)/float64(n))
	}
	return best
}

// The list is decoded item by item wherever "items" stands, null items are none, and a
// truncated list is an error rather than a short list.
func TestDecodeItemsStreamsAList(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"kind":"PodList","metadata":{"resourceVersion":"7"},"items":[{"spec":{"nodeName":"a"}},{"spec":{"nodeName":"b"}}]}`, "a,b@7"},
		{`{"items":[{"spec":{"nodeName":"a"}}],"kind":"PodList","metadata":{"resourceVersion":"9"}}`, "a@9"},
		{`{"kind":"PodList","items":null}`, ""},
		{`{"kind":"PodList","items":[]}`, ""},
		{`{"kind":"PodList","items":[{"spec":{"nodeName":"a"}},`, "error"},
		{`[]`, "error"},
	} {
		items, rv, err := decodeItems[PodResources](json.NewDecoder(strings.NewReader(tc.body)))
		var names []string
		for _, p := range items {
			names = append(names, p.Spec.NodeName)
		}
		got := strings.Join(names, ",")
		if rv != "" {
			got += "@" + rv
		}
		if err != nil {
			got = "error"
		}
		if got != tc.want {
			t.Errorf("%s: got %q (%v), want %q", tc.body, got, err, tc.want)
		}
	}
}
