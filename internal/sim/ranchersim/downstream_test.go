package ranchersim

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// TestDownstreamCluster (a real kube-apiserver as Options.Downstream): a provisioning cluster's
// /k8s proxy reaches the downstream Nodes (a Node patched there carries the annotation), its
// v3 nodeCount and capacity are the Nodes' sums, and deleting its v3 node deletes the Node.
func TestDownstreamCluster(t *testing.T) {
	env := kubeenv.Start(t)
	s := New(Options{Seed: 8, Downstream: &Upstream{Host: env.Host, Token: env.Token, CAData: env.CAData}})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c := &client{t: t, base: srv.URL, auth: "Bearer " + s.Token()}
	cid, token := provClusterWithToken(t, c, "halo", true)
	ctx := t.Context()
	for name, cpu := range map[string]int64{"halo-server-0": 4, "halo-agent-0": 8} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
		got, err := env.Clientset.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(cpu, resource.DecimalSI),
			corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourceEphemeralStorage: resource.MustParse("64Gi")}
		got.Status.Allocatable = got.Status.Capacity
		if _, err := env.Clientset.CoreV1().Nodes().UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.auth = "Bearer " + token
	if code, body, _ := c.do("POST", RegisterEndpoint, `{"nodeName":"halo-server-0","roles":["etcd","controlplane"]}`); code != 201 {
		t.Fatalf("register: %d %v", code, body)
	}
	c.auth = "Bearer " + s.Token()
	code, cl, _ := c.do("GET", "/v3/clusters/"+cid, "")
	capacity, _ := cl["capacity"].(map[string]any)
	if code != 200 || cl["nodeCount"] != 2.0 || capacity["cpu"] != "12" || capacity["memory"] != "16Gi" || capacity["ephemeral-storage"] != "128Gi" {
		t.Fatalf("cluster: %d nodeCount %v capacity %v", code, cl["nodeCount"], capacity)
	}
	req, _ := http.NewRequest(http.MethodPatch, srv.URL+"/k8s/clusters/"+cid+"/api/v1/nodes/halo-server-0",
		strings.NewReader(`{"metadata":{"annotations":{"etcd.rke2.cattle.io/remove":"true"}}}`))
	req.Header.Set("Authorization", "Bearer "+s.Token())
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	n, err := env.Clientset.CoreV1().Nodes().Get(ctx, "halo-server-0", metav1.GetOptions{})
	if resp.StatusCode != 200 || err != nil || n.Annotations["etcd.rke2.cattle.io/remove"] != "true" {
		t.Fatalf("patch through the proxy: %d %v %v", resp.StatusCode, err, n.Annotations)
	}
	id := ""
	for _, rn := range s.Nodes() {
		if rn.Name == "halo-server-0" {
			id = rn.ID
		}
	}
	if code, _, _ := c.do("DELETE", "/v3/nodes/"+id, ""); code != 200 {
		t.Fatalf("delete v3 node: %d", code)
	}
	if _, err := env.Clientset.CoreV1().Nodes().Get(ctx, "halo-server-0", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the downstream Node after its v3 node was deleted: %v", err)
	}
}
