package vclusters

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// mainAPI makes and removes virtual clusters' objects in the main API server.
type mainAPI struct {
	kube *Kube
	tmpl *TemplateConfig
	log  *zap.Logger
	// kubelet says a kubelet stand-in (KWOK) owns the Nodes' conditions and heartbeats and the
	// Pods' status: the tool then writes only capacity, allocatable and node info.
	kubelet   bool
	shared    sharedObjects // of import manifests, applied by this process
	annotated annotationLog // the Nodes' pod-resource annotations as last written or read
}

// ensureTenant makes sure the cluster's namespace, Nodes (with their status) and Pods exist,
// creating whatever is missing (after a crash or a restart, too). It reports whether it made
// every Node and Pod just now: the Nodes then carry the pod-resource annotations of exactly
// those Pods, and nobody need list them again.
func (a *mainAPI) ensureTenant(ctx context.Context, rec Record) (fresh bool, err error) {
	ns := TenantNamespace(rec.Name)
	a.log.Info("populate tenant from template", zap.String("cluster", rec.Name), zap.String("namespace", ns))
	if err := a.ensureNamespace(ctx, rec); err != nil {
		return false, err
	}
	nodes, err := a.ensureNodes(ctx, rec)
	if err != nil {
		return false, err
	}
	pods, err := a.ensurePods(ctx, rec)
	return err == nil && nodes == rec.Nodes && pods == rec.Pods, err
}

func (a *mainAPI) ensureNamespace(ctx context.Context, rec Record) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: TenantNamespace(rec.Name), Labels: identity(rec)}}
	_, err := a.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns.Name, err)
	}
	// Pod admission needs the namespace's "default" service account, which only a running
	// serviceaccount controller would create.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns.Name}}
	_, err = a.kube.CoreV1().ServiceAccounts(ns.Name).Create(ctx, sa, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service account %s/default: %w", ns.Name, err)
	}
	return nil
}

// ensureNodes creates missing Nodes and patches the status of any whose capacity or
// allocatable is not the template's; it returns how many it created. A new Node is created with
// its status (Nodes, unlike Pods, keep the status they are created with, as the kubelet
// registers them) and its Pods' resource annotations: with a kubelet stand-in the capacity,
// allocatable and node info, which KWOK's node-initialize keeps, so no second write is needed
// (the setup still waits for node-initialize of every Node before the Pods); without one, the
// whole status with a Ready condition. Creation comes first and a read only when the Node
// exists: a new cluster's Nodes cost one request each.
func (a *mainAPI) ensureNodes(ctx context.Context, rec Record) (int, error) {
	var created atomic.Int32
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, n := range a.tmpl.templateNodes(rec) {
		g.Go(func() error {
			got, err := a.kube.CoreV1().Nodes().Create(ctx, a.tmpl.newNode(n, rec, a.kubelet), metav1.CreateOptions{})
			made := err == nil
			if made {
				created.Add(1)
				a.log.Info("applying node", zap.String("cluster", rec.Name), zap.String("node", n.Name),
					zap.Stringer("capacity", resources(a.tmpl.capacity)), zap.Stringer("allocatable", resources(a.tmpl.alloc)))
			} else if apierrors.IsAlreadyExists(err) {
				got, err = a.kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			}
			if err != nil {
				return fmt.Errorf("node %s: %w", n.Name, err)
			}
			a.annotated.saw(got)
			if a.kubelet {
				// New or found, the Pods come after KWOK manages the Node: KWOK v0.8.0 skips a
				// Pod whose Node it does not manage yet, and its catch-up list of the Node's Pods
				// can run before it registers the Node, leaving them Pending for good. A Node
				// KWOK initialized with its default 1k CPUs gets the template's capacity then.
				return a.awaitInitialized(ctx, rec.Name, n.Name, made)
			}
			if a.tmpl.statusDrifted(got) {
				return a.patchNodeStatus(ctx, rec.Name, n.Name)
			}
			return nil
		})
	}
	err := g.Wait()
	return int(created.Load()), err
}

// awaitInitialized waits (at most 30 s) for KWOK's node-initialize stage, which writes the
// Node's conditions (and a default capacity of 1k CPUs unless the Node had one), then writes the
// template's capacity; a Node told to stop heartbeating (chaos) is not waited for. It reads the
// API server's watch cache (cached). Whether the tool holds the Node's Lease (chaos) is
// asked at once of a Node that was there, and of one made just now only after a second: a new
// Node's Lease is KWOK's unless a crash left the tool's.
func (a *mainAPI) awaitInitialized(ctx context.Context, cluster, name string, made bool) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for polls := 0; ; polls++ {
		n, err := a.kube.CoreV1().Nodes().Get(ctx, name, cached)
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("node %s: %w", name, err)
		}
		if err == nil && (nodeReady(n) || ((!made || polls >= 5) && a.heldByChaos(ctx, name))) {
			if a.tmpl.statusDrifted(n) {
				return a.patchNodeStatus(ctx, cluster, name)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s not initialized by the kubelet stand-in (is kwok running?): %w", name, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// patchNodeStatus writes the template status into a Node's status subresource: with a kubelet
// stand-in only capacity, allocatable and node info (replacing the whole lists), else a whole
// status with a Ready condition.
func (a *mainAPI) patchNodeStatus(ctx context.Context, cluster, name string) error {
	st := a.tmpl.nodeStatus()
	pt, doc := types.MergePatchType, any(map[string]any{"status": st})
	if a.kubelet {
		pt, doc = types.JSONPatchType, []map[string]any{
			{"op": "add", "path": "/status/capacity", "value": st.Capacity},
			{"op": "add", "path": "/status/allocatable", "value": st.Allocatable},
			{"op": "add", "path": "/status/nodeInfo", "value": st.NodeInfo}}
	}
	body, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	_, err = a.kube.CoreV1().Nodes().Patch(ctx, name, pt, body, metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("patch status of node %s: %w", name, err)
	}
	a.log.Info("patched node status", zap.String("cluster", cluster), zap.String("node", name))
	return nil
}

// ensurePods creates the template Pods that are missing; it returns how many it created.
func (a *mainAPI) ensurePods(ctx context.Context, rec Record) (int, error) {
	ns := TenantNamespace(rec.Name)
	// From the watch cache: a Pod it has not seen yet is refused as existing at its create.
	have, err := a.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: NodeSelector(rec.Name), ResourceVersion: "0"})
	if err != nil {
		return 0, fmt.Errorf("list pods in %s: %w", ns, err)
	}
	exists := map[string]bool{}
	for _, p := range have.Items {
		exists[p.Name] = true
	}
	var created atomic.Int32
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, p := range a.tmpl.templatePods(rec) {
		if exists[p.Name] {
			continue
		}
		g.Go(func() error {
			_, err := a.kube.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
			if err == nil {
				created.Add(1)
			} else if !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create pod %s/%s: %w", ns, p.Name, err)
			}
			return nil
		})
	}
	err = g.Wait()
	return int(created.Load()), err
}

// removeTenant deletes the cluster's namespace and its Pods, then its Nodes and its
// cluster-wide binding. Pods bound to its Nodes (in any namespace) are deleted gracefully, as
// the namespace controller would, and the kubelet stand-in (KWOK's pod-delete stage) finishes
// them; what is left after podWait (none running, or none managing these Nodes) is deleted
// with grace period 0, so the namespace does not stay Terminating. The Nodes go last: a Pod
// whose Node is gone has nobody to finish it.
func (a *mainAPI) removeTenant(ctx context.Context, rec Record, podWait time.Duration) error {
	ns := TenantNamespace(rec.Name)
	err := a.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete namespace %s: %w", ns, err)
	}
	nodes, err := a.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: NodeSelector(rec.Name)})
	if err != nil {
		return fmt.Errorf("list nodes of %s: %w", rec.Name, err)
	}
	names := make([]string, 0, len(nodes.Items))
	for _, n := range nodes.Items {
		names = append(names, n.Name)
		a.annotated.forget(n.Name)
	}
	if err := a.deletePods(ctx, rec.Name, podWait, func(ctx context.Context) ([]corev1.Pod, error) { return a.boundPods(ctx, names) }); err != nil {
		return err
	}
	err = a.kube.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: NodeSelector(rec.Name)})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete nodes of %s: %w", rec.Name, err)
	}
	err = a.kube.RbacV1().ClusterRoleBindings().Delete(ctx, adminBindingName(rec.Name), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete cluster role binding of %s: %w", rec.Name, err)
	}
	return nil
}

// deletePods deletes the Pods list returns, again until none is left, waiting up to podWait
// for them to go before deleting the rest with grace period 0.
func (a *mainAPI) deletePods(ctx context.Context, cluster string, podWait time.Duration, list func(context.Context) ([]corev1.Pod, error)) error {
	deadline := time.Now().Add(podWait)
	for {
		pods, err := list(ctx)
		if err != nil || len(pods) == 0 {
			return err
		}
		force := !time.Now().Before(deadline)
		for _, p := range pods {
			if p.DeletionTimestamp != nil && !force {
				continue
			}
			opts := metav1.DeleteOptions{}
			if force {
				opts.GracePeriodSeconds = new(int64)
			}
			err := a.kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, opts)
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete pod %s/%s: %w", p.Namespace, p.Name, err)
			}
		}
		if force {
			if podWait > 0 {
				a.log.Warn("pods did not finish in time, deleted them with grace period 0", zap.String("cluster", cluster), zap.Int("pods", len(pods)))
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// boundPods lists the Pods of every namespace bound to the named Nodes.
func (a *mainAPI) boundPods(ctx context.Context, nodes []string) ([]corev1.Pod, error) {
	var out []corev1.Pod
	for _, n := range nodes {
		pods, err := a.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n})
		if err != nil {
			return nil, fmt.Errorf("list pods on %s: %w", n, err)
		}
		out = append(out, pods.Items...)
	}
	return out, nil
}

// resources prints a resource list compactly for log lines.
type resources corev1.ResourceList

func (r resources) String() string {
	out := ""
	for _, k := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
		if q, ok := r[k]; ok {
			if out != "" {
				out += ","
			}
			out += fmt.Sprintf("%s=%s", k, q.String())
		}
	}
	return out
}
