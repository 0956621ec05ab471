package nodeemu

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// MemberController plays RKE2's managed-etcd controller (k3s pkg/etcd/member_controller.go,
// version.Program "rke2") on the Nodes of a real Kubernetes API server, as the cluster's servers
// run it: on a Node labelled node-role.kubernetes.io/etcd and annotated
// etcd.rke2.cattle.io/remove=true it removes the member named by etcd.rke2.cattle.io/node-name,
// then records it in etcd.rke2.cattle.io/removed-node-name and drops the node-name and
// node-address annotations; a failed removal is tried again. Through wrangler's OnRemove it
// holds a finalizer on every etcd Node, so a deleted Node's member is removed before the Node
// goes (unless the annotation removed it already).
type MemberController struct {
	kube   kubernetes.Interface
	remove func(member string) (bool, error)

	mu   sync.Mutex
	errs []string
}

const (
	annEtcdRemove   = "etcd.rke2.cattle.io/remove"
	annEtcdRemoved  = "etcd.rke2.cattle.io/removed-node-name"
	finalizerMember = "wrangler.cattle.io/managed-etcd-controller"
)

// RunMemberController syncs every Node each interval until ctx ends; remove removes a member
// from the cluster's etcd (true once it is not a member).
func RunMemberController(ctx context.Context, kube kubernetes.Interface, remove func(member string) (bool, error), every time.Duration) *MemberController {
	m := &MemberController{kube: kube, remove: remove}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(every):
			}
			m.syncAll(ctx)
		}
	}()
	return m
}

func (m *MemberController) syncAll(ctx context.Context) {
	list, err := m.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range list.Items {
		if err := m.sync(ctx, &list.Items[i]); err != nil && ctx.Err() == nil {
			m.mu.Lock()
			m.errs = append(m.errs, err.Error())
			m.mu.Unlock()
		}
	}
}

// sync is one Node's reconciliation.
func (m *MemberController) sync(ctx context.Context, n *corev1.Node) error {
	if _, etcd := n.Labels[labelEtcdRole]; !etcd {
		return nil
	}
	ann := n.Annotations
	removedByAnnotation := strings.EqualFold(ann[annEtcdRemove], "true") && ann[annEtcdRemoved] != ""
	switch {
	case n.DeletionTimestamp != nil:
		if !slices.Contains(n.Finalizers, finalizerMember) {
			return nil
		}
		if !removedByAnnotation {
			if err := m.removeMember(n); err != nil {
				return err
			}
		}
		n.Finalizers = slices.DeleteFunc(n.Finalizers, func(f string) bool { return f == finalizerMember })
	case !slices.Contains(n.Finalizers, finalizerMember):
		n.Finalizers = append(n.Finalizers, finalizerMember)
	case strings.EqualFold(ann[annEtcdRemove], "true") && ann[annEtcdRemoved] == "":
		name := ann[annEtcdNodeName]
		if err := m.removeMember(n); err != nil {
			return err
		}
		n.Annotations[annEtcdRemoved] = name
		delete(n.Annotations, annEtcdNodeName)
		delete(n.Annotations, annEtcdNodeAddr)
	default:
		return nil
	}
	_, err := m.kube.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	return err // a conflict is tried again at the next sync
}

func (m *MemberController) removeMember(n *corev1.Node) error {
	name, addr := n.Annotations[annEtcdNodeName], n.Annotations[annEtcdNodeAddr]
	if name == "" || addr == "" {
		return fmt.Errorf("node name or address annotation for node %s not found", n.Name)
	}
	removed, err := m.remove(name)
	if err == nil && !removed {
		err = fmt.Errorf("etcd member %s is not removed yet", name)
	}
	return err
}

// Errors lists the failed syncs (a removal etcd refused, tried again).
func (m *MemberController) Errors() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.errs...)
}
