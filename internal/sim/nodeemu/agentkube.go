package nodeemu

import (
	"context"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// UseKube makes the cluster's Nodes those of a real Kubernetes API server (the nodes' Kubelets
// register them): once the import manifest is applied, the cluster agent reports them to
// Rancher every reportEvery, as the real agent watches them — a Node is Ready while its Ready
// condition is True and its kubelet renewed its Lease within grace (kube-controller-manager's
// node lifecycle controller marks it NotReady after node-monitor-grace-period; kubeenv does not
// run it, so the report applies the rule); a Node being deleted is not reported.
func (c *Cluster) UseKube(kube kubernetes.Interface, grace time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kube, c.grace = kube, grace
}

const reportEvery = 500 * time.Millisecond

// Close stops the cluster agent's reports.
func (c *Cluster) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopWatch != nil {
		c.stopWatch()
	}
}

func (c *Cluster) watchNodes(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(reportEvery):
		}
		c.keep(c.report())
	}
}

func kubeNodeReport(kube kubernetes.Interface, grace time.Duration) ([]map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	leases, err := kube.CoordinationV1().Leases(corev1.NamespaceNodeLease).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	renewed := map[string]time.Time{}
	for _, l := range leases.Items {
		if l.Spec.RenewTime != nil {
			renewed[l.Name] = l.Spec.RenewTime.Time
		}
	}
	out := []map[string]any{}
	for _, n := range nodes.Items {
		if n.DeletionTimestamp != nil {
			continue
		}
		ready := false
		for _, cond := range n.Status.Conditions {
			ready = ready || cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue
		}
		ready = ready && time.Since(renewed[n.Name]) < grace
		roles := []string{"worker"}
		if _, etcd := n.Labels[labelEtcdRole]; etcd {
			roles = []string{"etcd", "controlplane"}
		}
		out = append(out, map[string]any{"nodeName": n.Name, "ready": ready, "labels": n.Labels, "roles": roles})
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["nodeName"].(string) < out[j]["nodeName"].(string) })
	return out, nil
}
