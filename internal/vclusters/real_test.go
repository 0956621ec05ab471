package vclusters

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Tier 2: the whole tool against the real kube-apiserver (kubeenv) and the Rancher simulator.

func TestRealVirtualClustersConnectAndServeRancher(t *testing.T) {
	w := newRealWorld(t, func(c *Config) { c.Sync.PodResourcesInterval = 2 * time.Second })
	a, b := w.name("a"), w.name("b")
	w.create(a, b)
	w.connected(60*time.Second, a, b)
	w.requested(30*time.Second, a, b)
	ctx := context.Background()

	for _, n := range []string{a, b} {
		info, _ := w.sim.ClusterByName(n)
		// Rancher sums what it sees through the tunnel: 3 Nodes × the template, 10 Pods × requests.
		want := map[string]string{"cpu": "48", "memory": "192Gi", "pods": "330"}
		for k, v := range want {
			if info.Capacity[k] != v || info.Allocatable[k] != v {
				t.Errorf("%s: capacity %v allocatable %v, want %s=%s", n, info.Capacity, info.Allocatable, k, v)
			}
		}
		if !info.Connected {
			t.Errorf("%s: rancher's connected check through the steve session failed", n)
		}
		if agent, steve := w.sim.Sessions(info.ID); !agent || !steve {
			t.Errorf("%s: sessions agent=%v steve=%v", n, agent, steve)
		}
		// Rancher's /k8s/clusters proxy reaches the cluster's own Nodes through the tunnel.
		var nodes corev1.NodeList
		if code := w.rancher("GET", "/k8s/clusters/"+info.ID+"/api/v1/nodes", &nodes); code != 200 || len(nodes.Items) != 3 {
			t.Errorf("%s: nodes through rancher: %d %d", n, code, len(nodes.Items))
		}
		for _, node := range nodes.Items {
			l := node.Labels
			if l[LabelLogicalCluster] != n || l[LabelKwokType] != KwokType || node.Annotations[AnnotationKwokNode] != "fake" ||
				l[LabelClusterID] == "" || node.Status.Capacity.Cpu().String() != "16" {
				t.Errorf("node %s: labels %v status %v", node.Name, l, node.Status.Capacity)
			}
		}
		if nodes.Items[0].Labels[roleControlPlane] != "true" || nodes.Items[1].Labels[roleWorker] != "true" {
			t.Errorf("%s: roles %v / %v", n, nodes.Items[0].Labels, nodes.Items[1].Labels)
		}
		// …and the main API server's namespaces without the tool's tenant namespaces.
		var nss corev1.NamespaceList
		if code := w.rancher("GET", "/k8s/clusters/"+info.ID+"/api/v1/namespaces", &nss); code != 200 {
			t.Errorf("%s: namespaces through rancher: %d", n, code)
		}
		if names := namespaceNames(nss); !slices.Contains(names, "kube-system") || slices.ContainsFunc(names, isTenantNamespace) {
			t.Errorf("%s: namespaces through rancher: %v, want kube-system and no tenant namespace", n, names)
		}
		pods, err := w.env.Clientset.CoreV1().Pods(TenantNamespace(n)).List(ctx, metav1.ListOptions{LabelSelector: NodeSelector(n)})
		if err != nil || len(pods.Items) != 10 || pods.Items[0].Spec.NodeName == "" || pods.Items[0].Spec.Containers[0].Resources.Requests.Cpu().String() != "100m" {
			t.Errorf("%s: pods %v %v", n, err, pods)
		}
	}
	w.podResourcesFollow(a)
	w.checkObservability(2)
	w.checkStateFile(2)
}

// podResourcesFollow binds one more Pod to a Node of cluster (as a workload Rancher deploys
// would be) and waits until the Node's pod-requests annotation counts it, then deletes it and
// waits until it no longer does: the loop follows the Pods it watches, not only its own.
func (w *realWorld) podResourcesFollow(cluster string) {
	w.t.Helper()
	ctx := context.Background()
	nodes := w.env.Clientset.CoreV1().Nodes()
	node := nodeName(cluster, 1)
	count := func() int {
		n, err := nodes.Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			w.t.Fatal(err)
		}
		var req map[string]string
		_ = json.Unmarshal([]byte(n.Annotations[AnnotationPodRequests]), &req)
		c, _ := strconv.Atoi(req["pods"])
		return c
	}
	before := count()
	ns := TenantNamespace(cluster)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "extra", Namespace: ns},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
	if _, err := w.env.Clientset.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
	waitFor(w.t, "the annotation to count a Pod bound by someone else", func() bool { return count() == before+1 })
	if err := w.env.Clientset.CoreV1().Pods(ns).Delete(ctx, "extra", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		w.t.Fatal(err)
	}
	waitFor(w.t, "the annotation to forget the deleted Pod", func() bool { return count() == before })
}

// checkObservability looks for seed 004's key log lines and the metrics of n connected clusters.
func (w *realWorld) checkObservability(n int) {
	t := w.t
	t.Helper()
	// Seed 004's key log lines, one per cluster or node.
	// Nodes are created with their status and annotations: a second write is for drift only.
	if got := w.logged("patched node status"); got != 0 {
		t.Errorf("log %q: %d lines for new Nodes, want none", "patched node status", got)
	}
	for msg, min := range map[string]int{"populate tenant from template": n, "applying node": 3 * n,
		"starting in-process api proxy": n, "cluster is ready, connecting to rancher": n, "tunnel connected": n} {
		if got := w.logged(msg); got < min {
			t.Errorf("log %q: %d lines, want %d", msg, got, min)
		}
	}
	m := w.metrics()
	for _, line := range []string{"clusters{status=\"connected\"}", "tunnel_sessions{session=\"agent\"}",
		"tunnel_sessions{session=\"steve\"}", "tunnel_connects_total{result=\"ok\",session=\"agent\"}", "setup_duration_seconds_count"} {
		if line = fmt.Sprintf("site_agent_vclusters_%s %d", line, n); !hasLine(m, line) {
			t.Errorf("metrics lack %s", line)
		}
	}
	if !strings.Contains(m, `site_agent_vclusters_proxy_requests_total{code="2xx"}`) {
		t.Errorf("metrics lack proxied requests")
	}
}

// checkStateFile waits for the state file to record n connected clusters (the saver writes
// within 200 ms).
func (w *realWorld) checkStateFile(n int) {
	w.t.Helper()
	waitFor(w.t, "the state file to record the connected clusters", func() bool {
		var st stateDoc
		data, _ := os.ReadFile(filepath.Join(w.cfg.StateDir, "state.json"))
		if json.Unmarshal(data, &st) != nil || len(st.Clusters) != n {
			return false
		}
		for _, r := range st.Clusters {
			if r.Step != StepImported || r.RancherID == "" || !r.Registered || r.ProxyPort == 0 || r.Status != StatusConnected {
				return false
			}
		}
		return true
	})
}

func TestRealDriftIsRepaired(t *testing.T) {
	w := newRealWorld(t, func(c *Config) { c.Sync.NodeStatusInterval = time.Second })
	n := w.name("drift")
	w.create(n)
	w.connected(60*time.Second, n)
	ctx := context.Background()
	nodes := w.env.Clientset.CoreV1().Nodes()
	patch := []byte(`{"status":{"capacity":{"cpu":"1"},"allocatable":{"cpu":"1"}}}`)
	if _, err := nodes.Patch(ctx, nodeName(n, 2), types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	if err := nodes.Delete(ctx, nodeName(n, 3), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForLong(t, 20*time.Second, "the drift loop to repair the nodes", func() bool {
		n2, err := nodes.Get(ctx, nodeName(n, 2), metav1.GetOptions{})
		n3, err3 := nodes.Get(ctx, nodeName(n, 3), metav1.GetOptions{})
		return err == nil && err3 == nil && n2.Status.Capacity.Cpu().Cmp(resource.MustParse("16")) == 0 &&
			n3.Status.Allocatable.Cpu().Cmp(resource.MustParse("16")) == 0
	})
	if w.logged("node status drifted from the template") < 1 || w.logged("virtual cluster nodes missing, re-creating them") < 1 {
		t.Errorf("drift repairs not logged")
	}
}

func TestRealDeletionInRancherCleansUp(t *testing.T) {
	w := newRealWorld(t, nil)
	gone, kept := w.name("gone"), w.name("kept")
	w.create(gone, kept)
	w.connected(60*time.Second, gone, kept)
	info, _ := w.sim.ClusterByName(gone)
	if !w.sim.DeleteCluster(info.ID) {
		t.Fatal("delete in rancher")
	}
	// The refused reconnect makes the deletion watcher look at once (its period is 30 s).
	waitForLong(t, 15*time.Second, "the deleted cluster to be removed", func() bool { _, ok := w.m.Get(gone); return !ok })
	w.tenantGone(gone)
	if _, ok := w.m.Get(kept); !ok || w.nodes(kept) != 3 {
		t.Errorf("the other cluster was touched")
	}
	if !hasLine(w.metrics(), `site_agent_vclusters_deleted_total{by="rancher"} 1`) {
		t.Error("deletion not counted")
	}
}

// A connected cluster whose Rancher record lost the agent's parameters (seen once in the real
// Rancher under load: pending, "Waiting for API to be available", for over 15 minutes) gets a
// new handshake, which records them again; the other cluster's tunnels are left alone.
func TestRealLostRegistrationIsRecordedAgain(t *testing.T) {
	w := newRealWorld(t, func(c *Config) { c.Sync.DeletionInterval = time.Second })
	lost, kept := w.name("lost"), w.name("kept")
	w.create(lost, kept)
	w.connected(60*time.Second, lost, kept)
	info, _ := w.sim.ClusterByName(lost)
	before := w.sim.TunnelConnects()
	if !w.sim.LoseRegistration(info.ID) {
		t.Fatal("lose the registration")
	}
	var c struct {
		APIEndpoint string `json:"apiEndpoint"`
		State       string `json:"state"`
	}
	if w.rancher("GET", "/v3/clusters/"+info.ID, &c); c.APIEndpoint != "" || c.State != "pending" {
		t.Fatalf("the simulator still shows the registration: %+v", c)
	}
	waitForLong(t, 20*time.Second, "rancher to record the agent again", func() bool {
		c.APIEndpoint = ""
		w.rancher("GET", "/v3/clusters/"+info.ID, &c)
		return c.APIEndpoint != ""
	})
	if got := w.logged("rancher shows the connected cluster without the agent's parameters, reconnecting its tunnels"); got != 1 {
		t.Errorf("logged %d times, want 1", got)
	}
	if !hasLine(w.metrics(), `site_agent_vclusters_errors_total{stage="rancher_registration"} 1`) {
		t.Error("the new handshake is not counted")
	}
	after := w.sim.TunnelConnects()
	if after["agent"]-before["agent"] != 1 {
		t.Errorf("agent handshakes %v → %v, want one more (only the lost cluster's)", before, after)
	}
}

func TestRealDeleteThroughTheAPI(t *testing.T) {
	w := newRealWorld(t, nil)
	n := w.name("del")
	w.create(n)
	w.connected(60*time.Second, n)
	info, _ := w.sim.ClusterByName(n)
	if a := call(t, w.m.Handler(), "DELETE", "/clusters/"+n, ""); a.code != 200 || a.body["status"] != "deleted" {
		t.Fatalf("delete: %d %s", a.code, a.raw)
	}
	if _, found := w.sim.ClusterByName(n); found {
		t.Errorf("rancher still has %s", info.ID)
	}
	// The tunnel stayed up until Rancher had deployed its cleanup through it.
	if res, ok := w.sim.Cleanup(info.ID); !ok || !res.Deployed {
		t.Errorf("rancher's cleanup did not reach the cluster: %+v", res)
	} else if _, err := w.env.Clientset.BatchV1().Jobs("default").Get(context.Background(), res.Job, metav1.GetOptions{}); err != nil {
		t.Errorf("cleanup job %s: %v", res.Job, err)
	}
	w.tenantGone(n)
	if a := call(t, w.m.Handler(), "GET", "/clusters/"+n, ""); a.code != 404 {
		t.Errorf("deleted cluster answers %d", a.code)
	}
}

// tenantGone checks that a cluster's Nodes and binding are gone and its namespace is going.
func (w *realWorld) tenantGone(n string) {
	w.t.Helper()
	ctx := context.Background()
	if got := w.nodes(n); got != 0 {
		w.t.Errorf("%s: %d nodes left", n, got)
	}
	if _, err := w.env.Clientset.RbacV1().ClusterRoleBindings().Get(ctx, adminBindingName(n), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		w.t.Errorf("%s: admin binding: %v", n, err)
	}
	ns, err := w.env.Clientset.CoreV1().Namespaces().Get(ctx, TenantNamespace(n), metav1.GetOptions{})
	if err == nil && ns.DeletionTimestamp == nil {
		w.t.Errorf("%s: namespace not being deleted", n)
	}
}

func TestRealRestartRehydratesAndReconnects(t *testing.T) {
	w := newRealWorld(t, nil)
	n := w.name("restart")
	w.create(n)
	w.connected(60*time.Second, n)
	before, _ := w.m.Get(n)
	w.stop()
	if agent, _ := w.sim.Sessions(before.RancherClusterID); agent {
		t.Fatal("the agent session outlived the manager")
	}
	// Behind the stopped tool's back: a Pod and a Node disappear.
	ctx := context.Background()
	kube := w.env.Clientset
	if err := kube.CoreV1().Pods(TenantNamespace(n)).Delete(ctx, n+"-pod-4", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().Nodes().Delete(ctx, nodeName(n, 1), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	connects := w.sim.TunnelConnects()
	w.start()
	w.connected(60*time.Second, n)
	after, _ := w.m.Get(n)
	if after.ID != before.ID || after.RancherClusterID != before.RancherClusterID || after.ProxyAddress != before.ProxyAddress {
		t.Errorf("after restart %+v, before %+v: id, rancher cluster and proxy port must be kept", after, before)
	}
	if got := w.sim.TunnelConnects(); got["agent.register"] != connects["agent.register"] || got["agent"] != connects["agent"]+1 {
		t.Errorf("handshakes %v → %v: a restarted agent connects (not registers) once", connects, got)
	}
	if w.nodes(n) != 3 {
		t.Errorf("nodes after restart: %d", w.nodes(n))
	}
	if _, err := kube.CoreV1().Pods(TenantNamespace(n)).Get(ctx, n+"-pod-4", metav1.GetOptions{}); err != nil {
		t.Errorf("deleted pod not re-created: %v", err)
	}
	if c := w.sim.Calls(); c["cluster.create"] != 1 {
		t.Errorf("rancher calls %v: the restart must not import again", c)
	}
}
