package ranchersim

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// The simulator in front of a real kube-apiserver: client-go through /k8s/clusters/<id>, the
// v3 namespaces read through, and project deletion releasing namespaces as Rancher v2.12.0
// does: the one made through norman is deleted, the one made through the proxy stays without
// its project annotation (removal.go).
func TestKubernetesBehindTheSimulator(t *testing.T) {
	env := kubeenv.Shared(t)
	s := New(Options{Clusters: []string{"c-m-kube0001"}, Upstream: &Upstream{Host: env.Host, Token: env.Token, CAData: env.CAData}})
	srv := httptest.NewTLSServer(s)
	t.Cleanup(srv.Close)
	c := &client{t: t, base: srv.URL, auth: "Bearer " + s.Token(), hc: srv.Client()}
	cs := func(token string) *kubernetes.Clientset {
		out, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL + "/k8s/clusters/c-m-kube0001", BearerToken: token,
			TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	ctx := t.Context()
	if _, err := cs(s.Token()).CoreV1().Namespaces().List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		t.Fatalf("client-go through the proxy: %v", err)
	}
	if _, err := cs("token-sim01:wrong").CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Fatalf("wrong token: %v", err)
	}

	get := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		code, out, _ := c.do(method, path, body)
		return code, out
	}
	_, p := get("POST", "/v3/projects", `{"name":"kube-p","clusterId":"c-m-kube0001"}`)
	pid := p["id"].(string)
	ns := "sim-" + strings.ToLower(strings.SplitN(pid, ":p-", 2)[1])
	code, body := get("POST", "/v3/clusters/c-m-kube0001/namespaces",
		`{"type":"namespace","name":"`+ns+`","projectId":"`+pid+`","labels":{"gpu-pool":"a100"}}`)
	if code != 201 || body["projectId"] != pid {
		t.Fatalf("create namespace: %d %v", code, body)
	}
	n, err := env.Clientset.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil || n.Labels["field.cattle.io/projectId"] != strings.SplitN(pid, ":", 2)[1] || n.Labels["gpu-pool"] != "a100" ||
		n.Annotations["field.cattle.io/projectId"] != pid {
		t.Fatalf("namespace on the cluster: %+v %v", n, err)
	}
	if code, _ := get("POST", "/v3/clusters/c-m-kube0001/namespaces", `{"name":"`+ns+`"}`); code != 409 {
		t.Fatalf("duplicate namespace: %d", code)
	}
	_, list := get("GET", "/v3/clusters/c-m-kube0001/namespaces?projectId="+pid, "")
	if d := list["data"].([]any); len(d) != 1 || d[0].(map[string]any)["name"] != ns {
		t.Fatalf("namespaces of the project: %v", list)
	}
	proxied := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns + "-x", Labels: map[string]string{"field.cattle.io/projectId": projectPart(pid)},
		Annotations: map[string]string{"field.cattle.io/projectId": pid}}}
	if _, err := cs(s.Token()).CoreV1().Namespaces().Create(ctx, proxied, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Clientset.CoreV1().Namespaces().Delete(ctx, proxied.Name, metav1.DeleteOptions{}) })
	if code, _ := get("DELETE", "/v3/projects/"+pid, ""); code != 200 {
		t.Fatalf("delete project: %d", code)
	}
	waitDeleted(t, env, ns)
	kept, err := env.Clientset.CoreV1().Namespaces().Get(ctx, proxied.Name, metav1.GetOptions{})
	if err != nil || kept.DeletionTimestamp != nil || kept.Annotations["field.cattle.io/projectId"] != "" ||
		kept.Labels["field.cattle.io/projectId"] != projectPart(pid) {
		t.Fatalf("the namespace made through the proxy after its project's deletion: %+v %v", kept, err)
	}
	s.FailNext("k8s.GET", 1, Fault503)
	if _, err := cs(s.Token()).CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("injected 503 through the proxy: %v", err)
	}
	// The unauthenticated request is not counted: faults and counts come after authentication.
	if calls := s.Calls(); calls["k8s.GET"] != 2 || calls["namespace.create"] != 2 || calls["k8s.POST"] != 1 {
		t.Fatalf("calls %v", calls)
	}
}

// waitDeleted waits (bounded) until a namespace is gone or terminating.
func waitDeleted(t *testing.T, env *kubeenv.Env, ns string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		n, err := env.Clientset.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && n.DeletionTimestamp != nil) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the project's namespace survived its deletion: %+v %v", n, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Rancher's namespace-auth write (nsauth.go): the first GET of a namespace through the proxy
// answers the version the write then replaces, so an update from it is 409; the next read sees
// the write (and is not written again), and an update from it goes through.
func TestNamespaceAuthWritesAfterTheFirstRead(t *testing.T) {
	env := kubeenv.Shared(t)
	s := New(Options{Clusters: []string{"c-m-nsauth01"}, Upstream: &Upstream{Host: env.Host, Token: env.Token, CAData: env.CAData}})
	srv := httptest.NewTLSServer(s)
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL + "/k8s/clusters/c-m-nsauth01", BearerToken: s.Token(),
		TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	name := fmt.Sprintf("nsauth-%d", time.Now().UnixNano()%1e9) // the API server is shared with other test runs
	made, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Clientset.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}) })
	first, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil || first.ResourceVersion != made.ResourceVersion || first.Annotations[nsAuthCreated] != "" {
		t.Fatalf("first read: %+v %v (made at %s)", first, err, made.ResourceVersion)
	}
	first.Labels = map[string]string{"a": "b"}
	if _, err := cs.CoreV1().Namespaces().Update(ctx, first, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("update from the first read: %v, want 409 Conflict", err)
	}
	second, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil || second.Annotations[nsAuthCreated] != "true" || second.Annotations[cattleStatus] == "" {
		t.Fatalf("second read: %+v %v", second, err)
	}
	second.Labels = map[string]string{"a": "b"}
	if _, err := cs.CoreV1().Namespaces().Update(ctx, second, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update from the second read: %v", err)
	}
}
