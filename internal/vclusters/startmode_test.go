package vclusters

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/testenv"
	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// The program starts its own main API server from the kube-apiserver, etcd and
// kube-controller-manager binaries it is pointed at (with the node-lifecycle controller) and runs
// KWOK against it as the kubelet stand-in: a cluster's Nodes go Ready and stay so through renewed
// Leases, its Pods run with IPs, a chaos request makes Nodes stop heartbeating so that the
// node-lifecycle controller marks them NotReady (and Rancher sees it), a scale request resizes
// the running cluster, a delete leaves no Terminating namespace, and SIGTERM stops it all.
func TestRealBinaryStartsItsOwnMainAPIWithKWOK(t *testing.T) {
	if err := testenv.Gate(); err != nil {
		t.Skip(err)
	}
	bin, ok := kubeenv.BinDir()
	etcd, err := exec.LookPath("etcd")
	if !ok || err != nil {
		t.Fatalf("binaries missing in %s or etcd not in PATH: run scripts/kube/build.sh", bin)
	}
	sim, srv := rancherSim(t)
	stateDir := t.TempDir()
	cfg := binaryConfig(t, stateDir, "", srv.URL, "sync:\n  pod_resources_interval: 1s\n"+
		"kwok:\n  mode: run\n  binary: "+kwokBinary(t)+"\n  node_lease_duration: 4s\n")
	cfg = rewrite(t, cfg, "  kubeconfig: \n", "  start:\n    kube_apiserver: "+filepath.Join(bin, "kube-apiserver")+
		"\n    etcd: "+etcd+"\n    kube_controller_manager: "+filepath.Join(bin, "kube-controller-manager")+
		"\n    etcd_unsafe_no_fsync: true\n    node_monitor_grace_period: 6s\n")
	p := startBinary(t, cfg, sim.Token(), freePort(t))
	if code, body := p.call(t, "POST", "/clusters", `{"name":"own"}`); code != 201 {
		t.Fatalf("create: %d %v", code, body)
	}
	waitForLong(t, 90*time.Second, "the cluster to connect", func() bool {
		_, body := p.call(t, "GET", "/clusters/own", "")
		info, _ := sim.ClusterByName("own")
		return body["status"] == string(StatusConnected) && info.State == "active" && info.Capacity["cpu"] == "48"
	})
	for _, line := range []string{`"event":"main api server started"`, `"event":"kwok manages the virtual nodes"`} {
		if !strings.Contains(p.out.String(), line) {
			t.Errorf("no %s in:\n%s", line, p.out)
		}
	}
	rc, err := clientcmd.BuildConfigFromFlags("", filepath.Join(stateDir, "main-api", "admin.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(rc)
	checkHeartbeats(t, kube, "own", 3)
	checkPodsRunning(t, kube, "own", 10)
	checkChaos(t, p, kube, sim)
	checkScale(t, p, kube, sim)

	ports := filepath.Join(stateDir, "main-api", "ports.json")
	if code, _ := p.call(t, "DELETE", "/clusters/own", ""); code != 200 {
		t.Errorf("delete: %d", code)
	}
	// KWOK finishes the deleted Pods, so the namespace goes entirely.
	waitForLong(t, 60*time.Second, "the tenant namespace to be gone", func() bool {
		_, err := kube.CoreV1().Namespaces().Get(context.Background(), TenantNamespace("own"), metav1.GetOptions{})
		return err != nil && strings.Contains(err.Error(), "not found")
	})
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit 30 s after SIGTERM:\n%s", p.out)
	}
	if p.cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("exit code %d:\n%s", p.cmd.ProcessState.ExitCode(), p.out)
	}
	if host := apiHost(t, ports); host != "" {
		if c, err := net.DialTimeout("tcp", host, time.Second); err == nil {
			c.Close()
			t.Errorf("the main API server at %s outlived the tool", host)
		}
	}
}

// checkHeartbeats: the cluster's n Nodes are Ready and KWOK keeps renewing their Leases.
func checkHeartbeats(t *testing.T, kube kubernetes.Interface, cluster string, n int) {
	t.Helper()
	ctx := context.Background()
	waitForLong(t, 30*time.Second, "the nodes to be Ready", func() bool { return readyNodes(t, kube, cluster) == n })
	lease := func() time.Time {
		l, err := kube.CoordinationV1().Leases("kube-node-lease").Get(ctx, nodeName(cluster, 1), metav1.GetOptions{})
		if err != nil || l.Spec.RenewTime == nil {
			t.Fatalf("lease of %s: %v", nodeName(cluster, 1), err)
		}
		return l.Spec.RenewTime.Time
	}
	first := lease()
	waitForLong(t, 10*time.Second, "the lease to be renewed", func() bool { return lease().After(first) })
}

func readyNodes(t *testing.T, kube kubernetes.Interface, cluster string) int {
	t.Helper()
	nodes, err := kube.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: NodeSelector(cluster)})
	if err != nil {
		t.Fatal(err)
	}
	ready := 0
	for i := range nodes.Items {
		if nodeReady(&nodes.Items[i]) {
			ready++
		}
	}
	return ready
}

// checkPodsRunning: the cluster's n Pods run with IPs.
func checkPodsRunning(t *testing.T, kube kubernetes.Interface, cluster string, n int) {
	t.Helper()
	waitForLong(t, 30*time.Second, "the pods to run", func() bool {
		pods, err := kube.CoreV1().Pods(TenantNamespace(cluster)).List(context.Background(), metav1.ListOptions{LabelSelector: NodeSelector(cluster)})
		if err != nil || len(pods.Items) != n {
			return false
		}
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" || p.DeletionTimestamp != nil {
				return false
			}
		}
		return true
	})
}

// checkChaos: one Node stops heartbeating, goes NotReady (in Rancher too), and comes back.
func checkChaos(t *testing.T, p *process, kube kubernetes.Interface, sim *ranchersim.Server) {
	t.Helper()
	if code, body := p.call(t, "POST", "/clusters/own/chaos", `{"notready":1}`); code != 200 || body["notReady"] != 1.0 {
		t.Fatalf("chaos: %d %v", code, body)
	}
	began := time.Now()
	waitForLong(t, 60*time.Second, "the node-lifecycle controller to mark one node NotReady", func() bool {
		return readyNodes(t, kube, "own") == 2
	})
	n3, _ := kube.CoreV1().Nodes().Get(context.Background(), nodeName("own", 3), metav1.GetOptions{})
	if nodeReady(n3) {
		t.Errorf("the last node is still Ready: %v", n3.Status.Conditions)
	}
	t.Logf("one node NotReady %s after the chaos request", time.Since(began).Round(time.Second))
	info, _ := sim.ClusterByName("own")
	if err := sim.RefreshStats(context.Background(), info.ID); err != nil {
		t.Fatal(err)
	}
	if info, _ = sim.ClusterByName("own"); info.NotReadyNodes != 1 {
		t.Errorf("rancher sees %d NotReady nodes, want 1", info.NotReadyNodes)
	}
	if code, _ := p.call(t, "POST", "/clusters/own/chaos", `{"notready":0}`); code != 200 {
		t.Fatalf("chaos off: %d", code)
	}
	waitForLong(t, 30*time.Second, "the node to heartbeat again", func() bool { return readyNodes(t, kube, "own") == 3 })
}

// checkScale: the running cluster grows to 4 Nodes and 12 Pods, and Rancher's totals follow.
func checkScale(t *testing.T, p *process, kube kubernetes.Interface, sim *ranchersim.Server) {
	t.Helper()
	if code, body := p.call(t, "POST", "/clusters/own/scale", `{"nodes":4,"pods":12}`); code != 200 || body["nodes"] != 4.0 {
		t.Fatalf("scale: %d %v", code, body)
	}
	waitForLong(t, 30*time.Second, "4 Ready nodes", func() bool { return readyNodes(t, kube, "own") == 4 })
	checkPodsRunning(t, kube, "own", 12)
	info, _ := sim.ClusterByName("own")
	waitForLong(t, 20*time.Second, "rancher's totals to follow", func() bool {
		if err := sim.RefreshStats(context.Background(), info.ID); err != nil {
			return false
		}
		info, _ = sim.ClusterByName("own")
		return info.Nodes == 4 && info.Capacity["cpu"] == "64" && info.Requested["pods"] == "12" && info.Requested["cpu"] == "1200m"
	})
	if code, _ := p.call(t, "POST", "/clusters/own/scale", `{"nodes":2,"pods":4}`); code != 200 {
		t.Fatalf("scale down: %d", code)
	}
	checkPodsRunning(t, kube, "own", 4)
	if got := readyNodes(t, kube, "own"); got != 2 {
		t.Errorf("%d nodes after scaling down to 2", got)
	}
}

func rewrite(t testing.TB, path, old, new string) string {
	t.Helper()
	data := readFile(t, path)
	if !strings.Contains(data, old) {
		t.Fatalf("%s lacks %q", path, old)
	}
	writeTo(t, path, strings.Replace(data, old, new, 1))
	return path
}
