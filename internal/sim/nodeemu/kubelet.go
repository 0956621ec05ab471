package nodeemu

import (
	"context"
	"fmt"
	"sync"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// Kubelets plays the kubelets of a cluster's nodes against a real Kubernetes API server: a
// node that started registers its Node (labels, the role labels RKE2 adds, capacity from its
// machine) with the Ready condition, and renews its Lease in kube-node-lease every RenewEvery
// (the kubelet's node heartbeat, KEP-589) until its machine stops. A server's Node also carries
// the etcd annotations RKE2's etcd metadata controller sets (etcd.rke2.cattle.io/node-name and
// node-address), which the managed-etcd controller (MemberController) reads.
type Kubelets struct {
	kube       kubernetes.Interface
	RenewEvery time.Duration // default 1 s (the kubelet's is 10 s: a quarter of the 40 s lease)

	mu      sync.Mutex
	renewal map[string]context.CancelFunc
	errs    []string

	// written, when set, runs after each write of the Node and before its status: where the
	// controllers' writes land under load (the test of the conflict retries sets it).
	written func(*corev1.Node)
}

// LeaseSeconds is the nodes' lease duration (the kubelet's default, nodeLeaseDurationSeconds).
const LeaseSeconds = 40

// Machine is what a node's machine offers the kubelet.
type Machine struct {
	CPUs           int
	MemoryMiB      int
	EphemeralGiB   int // the root file system
	InternalIP     string
	MaxPods        int // default 110
	ProviderLabels map[string]string
}

// RKE2 labels and annotations (k3s pkg/etcd: EtcdRoleLabel, NodeNameAnnotation,
// NodeAddressAnnotation with the program name rke2).
const (
	labelEtcdRole     = "node-role.kubernetes.io/etcd"
	labelControlPlane = "node-role.kubernetes.io/control-plane"
	annEtcdNodeName   = "etcd.rke2.cattle.io/node-name"
	annEtcdNodeAddr   = "etcd.rke2.cattle.io/node-address"
)

// NewKubelets returns the kubelets of the cluster behind kube.
func NewKubelets(kube kubernetes.Interface) *Kubelets {
	return &Kubelets{kube: kube, RenewEvery: time.Second, renewal: map[string]context.CancelFunc{}}
}

// Register registers a started node's Node and starts renewing its Lease. A Node of that name
// (the machine was replaced) is taken over.
func (k *Kubelets) Register(ctx context.Context, b Boot, m Machine) error {
	got, err := k.registerNode(ctx, nodeObject(b, m))
	if err != nil {
		return fmt.Errorf("%s: %w", b.NodeName, err)
	}
	if err := k.renew(ctx, b.NodeName, got.UID); err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(context.Background())
	k.mu.Lock()
	if old := k.renewal[b.NodeName]; old != nil {
		old()
	}
	k.renewal[b.NodeName] = cancel
	k.mu.Unlock()
	go k.renewLoop(rctx, b.NodeName, got.UID)
	return nil
}

// registerNode creates the Node, or takes over the one of that name, then sets its status. Each
// write is retried on a conflict with a fresh read, as the kubelet's own registration and status
// updates are (kubernetes pkg/kubelet/kubelet_node_status.go: tryRegisterWithAPIServer reads the
// existing Node again; updateNodeStatus retries nodeStatusUpdateRetry times): under load the
// controllers (node lifecycle, RKE2's etcd metadata) write the same Node in between.
func (k *Kubelets) registerNode(ctx context.Context, node *corev1.Node) (*corev1.Node, error) {
	nodes := k.kube.CoreV1().Nodes()
	var got *corev1.Node
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		var err error
		got, err = nodes.Create(ctx, node.DeepCopy(), metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			return err
		}
		if got, err = nodes.Get(ctx, node.Name, metav1.GetOptions{}); err != nil {
			return err
		}
		take := node.DeepCopy()
		take.ResourceVersion, take.Finalizers = got.ResourceVersion, got.Finalizers // a fresh RKE2: its own etcd annotations
		got, err = nodes.Update(ctx, take, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("register the Node: %w", err)
	}
	if k.written != nil {
		k.written(got)
	}
	err = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		got.Status = node.Status
		updated, err := nodes.UpdateStatus(ctx, got, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			if fresh, gerr := nodes.Get(ctx, node.Name, metav1.GetOptions{}); gerr == nil {
				got = fresh
			}
			return err
		}
		if err == nil {
			got = updated
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("Node status: %w", err)
	}
	return got, nil
}

func nodeObject(b Boot, m Machine) *corev1.Node {
	labels := map[string]string{"kubernetes.io/hostname": b.NodeName, "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": "rke2"}
	ann := map[string]string{}
	if b.Role == "server" {
		labels[labelEtcdRole], labels[labelControlPlane], labels["node-role.kubernetes.io/master"] = "true", "true", "true"
		ann[annEtcdNodeName], ann[annEtcdNodeAddr] = b.NodeName, m.InternalIP
	}
	for k, v := range m.ProviderLabels {
		labels[k] = v
	}
	for k, v := range b.Labels {
		labels[k] = v
	}
	pods := m.MaxPods
	if pods == 0 {
		pods = 110
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(m.CPUs), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(int64(m.MemoryMiB)<<20, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(int64(m.EphemeralGiB)<<30, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(int64(pods), resource.DecimalSI),
	}
	now := metav1.Now()
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: b.NodeName, Labels: labels, Annotations: ann},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity,
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: m.InternalIP}, {Type: corev1.NodeHostName, Address: b.NodeName}},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now}}},
	}
}

// renew creates or renews the node's Lease, owned by its Node (as the kubelet does).
func (k *Kubelets) renew(ctx context.Context, name string, uid types.UID) error {
	leases := k.kube.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	l, err := leases.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		secs := int32(LeaseSeconds)
		l = &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: corev1.NamespaceNodeLease},
			Spec: coordv1.LeaseSpec{HolderIdentity: &name, LeaseDurationSeconds: &secs, RenewTime: &now}}
		l.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: name, UID: uid}}
		_, err = leases.Create(ctx, l, metav1.CreateOptions{})
	} else if err == nil {
		l.Spec.RenewTime = &now
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("%s: renew the Lease: %w", name, err)
	}
	return nil
}

func (k *Kubelets) renewLoop(ctx context.Context, name string, uid types.UID) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(k.RenewEvery):
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := k.renew(rctx, name, uid); err != nil && ctx.Err() == nil {
			k.mu.Lock()
			k.errs = append(k.errs, err.Error())
			k.mu.Unlock()
		}
		cancel()
	}
}

// Stop stops a node's kubelet (its machine went): its Lease is no longer renewed.
func (k *Kubelets) Stop(name string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if cancel := k.renewal[name]; cancel != nil {
		cancel()
		delete(k.renewal, name)
	}
}

// Close stops every kubelet.
func (k *Kubelets) Close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for n, cancel := range k.renewal {
		cancel()
		delete(k.renewal, n)
	}
}

// Errors lists failed lease renewals.
func (k *Kubelets) Errors() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.errs...)
}
