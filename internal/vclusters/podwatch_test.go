package vclusters

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/client-go/rest"

	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// testPod is a Pod of one container requesting cpu, bound to node, in phase.
func testPod(name, node, cpu string, phase corev1.PodPhase) *PodResources {
	return podResourcesOf(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
		Status: corev1.PodStatus{Phase: phase}})
}

func sortedKeys(m map[string]struct{}) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// The set sums what counts on each Node and names the Nodes whose Pods changed: a new Pod, a
// Pod that finished (no longer counted), one moved away and one deleted mark their Nodes; a list
// marks every Node.
func TestPodSetTracksNodesWhosePodsChanged(t *testing.T) {
	var x podSet
	if _, _, ok := x.take(); ok {
		t.Fatal("take before the first list must report not synced")
	}
	x.replace([]PodResources{*testPod("a", "n1", "100m", corev1.PodRunning), *testPod("b", "n2", "200m", corev1.PodRunning)})
	if dirty, all, ok := x.take(); !ok || !all || sortedKeys(dirty) != "n1,n2" {
		t.Fatalf("after a list: dirty %v all %v ok %v", dirty, all, ok)
	}
	if dirty, all, _ := x.take(); all || len(dirty) != 0 {
		t.Fatalf("a second take: dirty %v all %v", dirty, all)
	}
	x.apply(testPod("c", "n1", "300m", corev1.PodPending), false)
	if req, _ := x.annotations("n1"); req != `{"cpu":"400m","pods":"2"}` {
		t.Errorf("n1 with a and c: %s", req)
	}
	x.apply(testPod("a", "n1", "100m", corev1.PodSucceeded), false) // finished: no longer counted
	x.apply(testPod("b", "n2", "200m", corev1.PodRunning), true)    // deleted
	if dirty, all, _ := x.take(); all || sortedKeys(dirty) != "n1,n2" {
		t.Fatalf("after changes on n1 and n2: dirty %v all %v", sortedKeys(dirty), all)
	}
	if req, _ := x.annotations("n1"); req != `{"cpu":"300m","pods":"1"}` {
		t.Errorf("n1 with c only: %s", req)
	}
	if req, _ := x.annotations("n2"); req != `{}` {
		t.Errorf("n2 emptied: %s", req)
	}
	x.apply(testPod("c", "n3", "300m", corev1.PodRunning), false) // moved: both Nodes change
	if dirty, _, _ := x.take(); sortedKeys(dirty) != "n1,n3" {
		t.Fatalf("a Pod on another Node: dirty %v", sortedKeys(dirty))
	}
	x.markDirty("n9")
	x.markAll()
	if dirty, all, _ := x.take(); !all || sortedKeys(dirty) != "n9" {
		t.Fatalf("marked: dirty %v all %v", sortedKeys(dirty), all)
	}
}

// Tier 2: against the real API server the watch resumes from the list's resource version and
// brings each change — a new Pod, its status, its deletion.
func TestRealPodWatchFollowsTheList(t *testing.T) {
	env := kubeenv.Shared(t)
	if env == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	core := env.Clientset.CoreV1()
	ns := testNamespace(t, env, "podwatch")
	k, err := NewKube(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	items, rv, err := k.listPodResources(ctx, "")
	if err != nil || rv == "" {
		t.Fatalf("list: rv %q: %v", rv, err)
	}
	var x podSet
	x.replace(items)
	x.take()
	node := ns + "-node"
	if _, err := core.Pods(ns).Create(ctx, resourcePod(0, node), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	setPodPhase(t, env, ns, "p0", corev1.PodFailed)
	if _, err := core.Pods(ns).Create(ctx, resourcePod(1, node), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := core.Pods(ns).Delete(ctx, "p1", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	// The four events (p0 added and failed, p1 added and deleted), then the watch is ended.
	var seen []string
	wctx, wcancel := context.WithCancel(ctx)
	last, n, err := k.watchPodResources(wctx, rv, func(p *PodResources, deleted bool) {
		x.apply(p, deleted)
		if p.Metadata.Namespace == ns {
			seen = append(seen, fmt.Sprintf("%s:%s:%v", p.Metadata.Name, p.Status.Phase, deleted))
			if deleted {
				wcancel()
			}
		}
	})
	wcancel()
	if err != context.Canceled || n < 4 || last == rv {
		t.Fatalf("watch: %d events, last rv %q (from %q): %v", n, last, rv, err)
	}
	// (v1.36 sends the grace-0 deletion of a bound Pod as a change, then the deletion.)
	if got := strings.Join(seen, " "); !strings.HasPrefix(got, "p0:Pending:false p0:Failed:false p1:Pending:false ") ||
		!strings.HasSuffix(got, " p1:Pending:true") {
		t.Errorf("events: %s", got)
	}
	if dirty, _, _ := x.take(); !hasKey(dirty, node) {
		t.Errorf("the Node of the changed Pods is not dirty: %v", sortedKeys(dirty))
	}
	if req, _ := x.annotations(node); req != `{}` {
		t.Errorf("a failed and a deleted Pod count: %s", req)
	}
}

// A resource version the API server no longer has ends the watch with errRelist, whether it is
// refused at once (HTTP 410) or sent as an ERROR event in the stream (as the watch cache does:
// "too old resource version", code 410, reason Expired); another ERROR event is an error.
func TestPodWatchAsksForANewListWhenTooOld(t *testing.T) {
	tooOld := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (1542)","reason":"Expired","code":410}`
	for _, tc := range []struct {
		name   string
		status int
		body   string
		relist bool
	}{
		{"refused", http.StatusGone, tooOld, true},
		{"in the stream", http.StatusOK, `{"type":"ADDED","object":{"metadata":{"name":"a","namespace":"n","resourceVersion":"5"}}}` + "\n" +
			`{"type":"ERROR","object":` + tooOld + `}`, true},
		{"another error", http.StatusOK, `{"type":"ERROR","object":{"kind":"Status","code":500,"reason":"InternalError"}}`, false},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/api/v1/pods" || r.URL.Query().Get("watch") != "true" || r.URL.Query().Get("resourceVersion") != "1" {
				http.Error(w, "unexpected "+r.URL.String(), http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(tc.body))
		}))
		k, err := NewKube(&rest.Config{Host: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = k.watchPodResources(context.Background(), "1", func(*PodResources, bool) {})
		srv.Close()
		if errors.Is(err, errRelist) != tc.relist || err == nil {
			t.Errorf("%s: %v (relist %v)", tc.name, err, tc.relist)
		}
	}
}
