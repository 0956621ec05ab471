package vclusters

import (
	"context"
	"encoding/json"
	"sync"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The annotations the cluster agent's podresources controller keeps on every Node of its cluster
// (rancher pkg/controllers/managementagent/podresources); Rancher's nodesyncer and statsaggregator
// read the cluster's requested and limits totals from them, not from the Pods.
const (
	AnnotationPodRequests = "management.cattle.io/pod-requests"
	AnnotationPodLimits   = "management.cattle.io/pod-limits"
)

// podResourcesLoop does the agent's podresources work for every virtual cluster: every
// sync.pod_resources_interval (Rancher's agent re-queues each Node every 15 s) it sums the
// requests and limits of the non-terminated Pods of the Nodes whose Pods changed (from the pod
// index its watch keeps) and updates their annotations where the figures differ from what the
// Node has. Every 20th pass, and after the index was listed again, it compares every Node.
func (m *Manager) podResourcesLoop(ctx context.Context) {
	passes := 0
	pass := func() {
		if err := m.syncPodResources(ctx, passes%20 == 0); err != nil && ctx.Err() == nil {
			m.met.Errors.WithLabelValues("pod_resources").Inc()
			m.log.Warn("pod resource annotations not updated", zap.Error(err))
		}
		passes++
	}
	pass()
	every(ctx, m.cfg.Sync.PodResourcesInterval, nil, pass)
}

func (m *Manager) syncPodResources(ctx context.Context, everyNode bool) error {
	dirty, all, ok := m.pods.take()
	if !ok {
		return nil // not listed yet
	}
	owners := m.tenantsInPlace()
	if len(owners) == 0 {
		return nil
	}
	var candidates []string
	if all || everyNode {
		// ResourceVersion "0": from the API server's watch cache, as the agent's informers list.
		nodes, err := m.main.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: LabelManagedBy + "=" + ManagedBy, ResourceVersion: "0"})
		if err != nil {
			m.pods.markAll() // the Nodes taken as dirty are compared at the next pass
			return err
		}
		for i := range nodes.Items {
			n := &nodes.Items[i]
			if _, ok := owners[n.Labels[LabelLogicalCluster]]; ok {
				m.main.annotated.saw(n)
				candidates = append(candidates, n.Name)
			}
		}
	} else {
		for _, rec := range owners {
			for i := 1; i <= rec.Nodes; i++ {
				if name := nodeName(rec.Name, i); hasKey(dirty, name) {
					candidates = append(candidates, name)
				}
			}
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, name := range candidates {
		requests, limits := m.pods.annotations(name)
		if m.main.annotated.is(name, requests, limits) {
			continue
		}
		g.Go(func() error {
			err := m.main.annotateNode(gctx, name, requests, limits)
			if err != nil {
				m.pods.markDirty(name)
			}
			return err
		})
	}
	return g.Wait()
}

func hasKey(m map[string]struct{}, k string) bool { _, ok := m[k]; return ok }

// annotationLog is the pod-resource annotations each Node had when the tool last wrote or read
// them, so that a pass writes only what changed.
type annotationLog struct {
	mu    sync.Mutex
	nodes map[string][2]string
}

func (l *annotationLog) set(node, requests, limits string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.nodes == nil {
		l.nodes = map[string][2]string{}
	}
	l.nodes[node] = [2]string{requests, limits}
}

// saw records what a Node read from the API server has.
func (l *annotationLog) saw(n *corev1.Node) {
	l.set(n.Name, n.Annotations[AnnotationPodRequests], n.Annotations[AnnotationPodLimits])
}

func (l *annotationLog) is(node, requests, limits string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	got, ok := l.nodes[node]
	return ok && got == [2]string{requests, limits}
}

func (l *annotationLog) forget(node string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.nodes, node)
}

// annotateNodes writes one cluster's annotations at once (after its setup), so Rancher's first
// totals need not wait for the loop: its Pods are listed per Node from the watch cache's index.
func (a *mainAPI) annotateNodes(ctx context.Context, rec Record, nodes int) error {
	for i := 1; i <= nodes; i++ {
		name := nodeName(rec.Name, i)
		pods, err := a.kube.ListPodResources(ctx, "spec.nodeName="+name)
		if err != nil {
			return err
		}
		var live []*PodResources
		for j := range pods {
			if p := &pods[j]; p.Counts() {
				live = append(live, p)
			}
		}
		requests, limits := podResourceAnnotations(live)
		if err := a.annotateNode(ctx, name, requests, limits); err != nil {
			return err
		}
	}
	return nil
}

// tenantsInPlace are the clusters whose Nodes exist (set up at least once, not being deleted).
func (m *Manager) tenantsInPlace() map[string]Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	owners := map[string]Record{}
	for name, c := range m.clusters {
		if c.rec.Step != StepNone && !c.deleting {
			owners[name] = c.rec
		}
	}
	return owners
}

func (a *mainAPI) annotateNode(ctx context.Context, name, requests, limits string) error {
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		AnnotationPodRequests: requests, AnnotationPodLimits: limits}}})
	if err != nil {
		return err
	}
	n, err := a.kube.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		a.annotated.forget(name)
		return nil // deleted meanwhile (scale down, drift)
	}
	if err == nil {
		a.annotated.saw(n)
	}
	return err
}

// podResourceAnnotations renders a Node's annotations as podresources does: JSON maps of the
// summed container requests and limits (an init container counts with the largest of them),
// requests with the number of Pods under "pods" when the Node has any.
func podResourceAnnotations(pods []*PodResources) (requests, limits string) {
	req, lim := corev1.ResourceList{}, corev1.ResourceList{}
	for _, p := range pods {
		podReq, podLim := corev1.ResourceList{}, corev1.ResourceList{}
		for _, c := range p.Spec.Containers {
			addQuantities(podReq, c.Resources.Requests)
			addQuantities(podLim, c.Resources.Limits)
		}
		for _, c := range p.Spec.InitContainers {
			maxQuantities(podReq, c.Resources.Requests)
			maxQuantities(podLim, c.Resources.Limits)
		}
		addQuantities(req, podReq)
		addQuantities(lim, podLim)
	}
	if len(pods) > 0 {
		req[corev1.ResourcePods] = *resource.NewQuantity(int64(len(pods)), resource.DecimalSI)
	}
	r, _ := json.Marshal(req) // a ResourceList always marshals
	l, _ := json.Marshal(lim)
	return string(r), string(l)
}

func addQuantities(dst, src corev1.ResourceList) {
	for k, v := range src {
		q, ok := dst[k]
		if !ok {
			dst[k] = v.DeepCopy()
			continue
		}
		q.Add(v)
		dst[k] = q
	}
}

func maxQuantities(dst, src corev1.ResourceList) {
	for k, v := range src {
		if q, ok := dst[k]; !ok || v.Cmp(q) > 0 {
			dst[k] = v.DeepCopy()
		}
	}
}
