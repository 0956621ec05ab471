package nodeemu

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// TestKubeletsAndMemberController (tier 2, a real kube-apiserver): started nodes register Nodes
// with their machine's capacity and renew their Leases; a stopped kubelet's Node turns NotReady
// in the cluster agent's report once its Lease is older than the grace; RKE2's managed-etcd
// controller removes the member of a server annotated etcd.rke2.cattle.io/remove=true and
// records it, and removes the member of a deleted server Node (its finalizer) before the Node
// goes.
func TestKubeletsAndMemberController(t *testing.T) {
	env := kubeenv.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kube := env.Clientset
	k := NewKubelets(kube)
	k.RenewEvery = 200 * time.Millisecond
	defer k.Close()
	etcd := NewMemEtcd()
	for i, n := range []string{"c-server-0", "c-server-1", "c-server-2"} {
		if err := etcd.Add(n); err != nil {
			t.Fatal(err)
		}
		b := Boot{NodeName: n, Role: "server", Labels: map[string]string{"rke2.site-agent.waldur.com/role": "server"}}
		if err := k.Register(ctx, b, Machine{CPUs: 4, MemoryMiB: 8192, EphemeralGiB: 64, InternalIP: "10.0.0." + string(rune('1'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Register(ctx, Boot{NodeName: "c-agent-0", Role: "agent"}, Machine{CPUs: 2, MemoryMiB: 4096, EphemeralGiB: 64, InternalIP: "10.0.0.9"}); err != nil {
		t.Fatal(err)
	}
	n, err := kube.CoreV1().Nodes().Get(ctx, "c-agent-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cpu, mem := n.Status.Capacity.Cpu(), n.Status.Capacity.Memory(); cpu.Value() != 2 || mem.Value() != 4096<<20 {
		t.Fatalf("capacity %v", n.Status.Capacity)
	}
	first := leaseRenewed(t, kube, "c-agent-0")
	waitUntil(t, 5*time.Second, "the lease renewed", func() bool {
		return leaseRenewed(t, kube, "c-agent-0").After(first)
	})
	k.Stop("c-agent-0")
	waitUntil(t, 5*time.Second, "the stopped node NotReady", func() bool {
		report, err := kubeNodeReport(kube, time.Second)
		return err == nil && len(report) == 4 && !ready(report, "c-agent-0") && ready(report, "c-server-0")
	})

	mc := RunMemberController(ctx, kube, etcd.Remove, 100*time.Millisecond)
	patch := []byte(`{"metadata":{"annotations":{"etcd.rke2.cattle.io/remove":"true"}}}`)
	if _, err := kube.CoreV1().Nodes().Patch(ctx, "c-server-2", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "c-server-2's member removed and recorded", func() bool {
		n, err := kube.CoreV1().Nodes().Get(ctx, "c-server-2", metav1.GetOptions{})
		return err == nil && n.Annotations["etcd.rke2.cattle.io/removed-node-name"] == "c-server-2" && len(etcd.Members()) == 2
	})
	waitUntil(t, 10*time.Second, "the finalizer on c-server-1", func() bool {
		n, err := kube.CoreV1().Nodes().Get(ctx, "c-server-1", metav1.GetOptions{})
		return err == nil && slices.Contains(n.Finalizers, finalizerMember)
	})
	if err := kube.CoreV1().Nodes().Delete(ctx, "c-server-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "c-server-1's Node gone with its member", func() bool {
		_, err := kube.CoreV1().Nodes().Get(ctx, "c-server-1", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if got := strings.Join(etcd.Members(), " "); got != "c-server-0" || len(mc.Errors()) > 0 || len(k.Errors()) > 0 {
		t.Fatalf("members %s, controller errors %v, kubelet errors %v", got, mc.Errors(), k.Errors())
	}
}

// TestKubeletsRetryConflicts (tier 2): another writer changes the Node between the kubelet's
// registration and its status update, on a new Node and on one taken over; the kubelet reads it
// again and registers anyway, as the real kubelet does (under load the node lifecycle
// controller's writes left a replaced server's Node without status, and the rke2 world test
// waiting for it timed out).
func TestKubeletsRetryConflicts(t *testing.T) {
	env := kubeenv.Start(t)
	ctx := context.Background()
	kube := env.Clientset
	k := NewKubelets(kube)
	defer k.Close()
	interfered := 0
	k.written = func(n *corev1.Node) {
		other := n.DeepCopy()
		other.Labels["written-by"] = "another-controller"
		if _, err := kube.CoreV1().Nodes().Update(ctx, other, metav1.UpdateOptions{}); err != nil {
			t.Errorf("the other writer: %v", err)
		}
		interfered++
	}
	machine := Machine{CPUs: 2, MemoryMiB: 2048, EphemeralGiB: 20, InternalIP: "10.0.1.1"}
	for _, step := range []string{"new", "taken over"} {
		if err := k.Register(ctx, Boot{NodeName: "conflicted", Role: "agent"}, machine); err != nil {
			t.Fatalf("%s Node: %v", step, err)
		}
		n, err := kube.CoreV1().Nodes().Get(ctx, "conflicted", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cpu := n.Status.Capacity.Cpu(); cpu.Value() != 2 || len(n.Status.Conditions) == 0 {
			t.Errorf("%s Node: status %+v", step, n.Status)
		}
	}
	if interfered != 2 {
		t.Errorf("the other writer ran %d times, want 2", interfered)
	}
}

func leaseRenewed(t *testing.T, kube kubernetes.Interface, name string) time.Time {
	t.Helper()
	l, err := kube.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil || l.Spec.RenewTime == nil {
		t.Fatalf("lease %s: %v", name, err)
	}
	return l.Spec.RenewTime.Time
}

func ready(report []map[string]any, name string) bool {
	for _, n := range report {
		if n["nodeName"] == name {
			return n["ready"] == true
		}
	}
	return false
}

func waitUntil(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
