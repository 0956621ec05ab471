package vclusters

import (
	"context"
	"encoding/json"

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
// sync.pod_resources_interval (Rancher's agent re-queues each Node every 15 s) it lists the
// Pods once, sums the requests and limits of the non-terminated ones per Node, and updates the
// annotations of the Nodes whose figures changed.
func (m *Manager) podResourcesLoop(ctx context.Context) {
	pass := func() {
		if err := m.syncPodResources(ctx); err != nil && ctx.Err() == nil {
			m.met.Errors.WithLabelValues("pod_resources").Inc()
			m.log.Warn("pod resource annotations not updated", zap.Error(err))
		}
	}
	pass()
	every(ctx, m.cfg.Sync.PodResourcesInterval, nil, pass)
}

func (m *Manager) syncPodResources(ctx context.Context) error {
	owners := m.tenantsInPlace()
	if len(owners) == 0 {
		return nil
	}
	// ResourceVersion "0": from the API server's watch cache, as the agent's informers list.
	nodes, err := m.main.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: LabelManagedBy + "=" + ManagedBy, ResourceVersion: "0"})
	if err != nil {
		return err
	}
	pods, err := m.main.kube.ListPodResources(ctx, "")
	if err != nil {
		return err
	}
	byNode := map[string][]*PodResources{}
	for i := range pods {
		if p := &pods[i]; p.Counts() {
			byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if _, ok := owners[n.Labels[LabelLogicalCluster]]; !ok {
			continue
		}
		requests, limits := podResourceAnnotations(byNode[n.Name])
		if n.Annotations[AnnotationPodRequests] == requests && n.Annotations[AnnotationPodLimits] == limits {
			continue
		}
		g.Go(func() error { return m.main.annotateNode(gctx, n.Name, requests, limits) })
	}
	return g.Wait()
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
	_, err = a.kube.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile (scale down, drift)
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
