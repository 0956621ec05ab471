package vclusters

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrInvalidSize is a scale or chaos request out of bounds.
var ErrInvalidSize = errors.New("invalid size")

// Scale changes a cluster's Node and Pod counts (nil keeps one) and brings its tenant to them:
// new Nodes and Pods are made, Pods beyond the count — or bound to a Node that goes, or whose
// round-robin Node changed — are deleted (and, when still counted, made again on their Node),
// Nodes beyond the count go after their Pods. A cluster still being set up gets the new size
// from its setup.
func (m *Manager) Scale(ctx context.Context, name string, nodes, pods *int) (View, error) {
	rec, err := m.resize(name, func(r *Record) error {
		n, p := r.Nodes, r.Pods
		if nodes != nil {
			n = *nodes
		}
		if pods != nil {
			p = *pods
		}
		switch {
		case n < 1 || n > 1000:
			return fmt.Errorf("%w: nodes must be between 1 and 1000, got %d", ErrInvalidSize, n)
		case p < 0 || p > 10000:
			return fmt.Errorf("%w: pods must be between 0 and 10000, got %d", ErrInvalidSize, p)
		}
		r.Nodes, r.Pods, r.NotReady = n, p, min(r.NotReady, n)
		return nil
	})
	if err != nil {
		return View{}, err
	}
	if rec.Step != StepNone {
		if err := m.applySize(ctx, rec); err != nil {
			return View{}, err
		}
	}
	m.log.Info("virtual cluster scaled", zap.String("cluster", name), zap.Int("nodes", rec.Nodes), zap.Int("pods", rec.Pods))
	v, _ := m.Get(name)
	return v, nil
}

// resize changes a cluster's size (Nodes, Pods, NotReady) under the manager's lock and saves
// it; it returns the new record.
func (m *Manager) resize(name string, f func(*Record) error) (Record, error) {
	m.mu.Lock()
	c := m.clusters[name]
	switch {
	case c == nil:
		m.mu.Unlock()
		return Record{}, ErrNotFound
	case c.deleting:
		m.mu.Unlock()
		return Record{}, ErrBusy
	}
	next := c.rec
	if err := f(&next); err != nil {
		m.mu.Unlock()
		return Record{}, err
	}
	c.rec.Nodes, c.rec.Pods, c.rec.NotReady = next.Nodes, next.Pods, next.NotReady // f changes only the size
	m.mu.Unlock()
	return next, m.saveNow()
}

// applySize makes the tenant match rec's size (one change at a time per cluster).
func (m *Manager) applySize(ctx context.Context, rec Record) error {
	m.mu.Lock()
	c := m.clusters[rec.Name]
	m.mu.Unlock()
	if c == nil {
		return ErrNotFound
	}
	c.tenant.Lock()
	defer c.tenant.Unlock()
	a := m.main
	if _, err := a.ensureNodes(ctx, rec); err != nil {
		return err
	}
	podWait := m.cfg.Sync.PodDeletionWait
	if !a.kubelet {
		podWait = 0
	}
	ns := TenantNamespace(rec.Name)
	stale := func(ctx context.Context) ([]corev1.Pod, error) {
		list, err := a.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: NodeSelector(rec.Name)})
		if err != nil {
			return nil, err
		}
		var out []corev1.Pod
		for _, p := range list.Items {
			if i, ok := podIndex(rec.Name, p.Name); !ok || i > rec.Pods || p.Spec.NodeName != podNode(rec, i) {
				out = append(out, p)
			}
		}
		return out, nil
	}
	if err := a.deletePods(ctx, rec.Name, podWait, stale); err != nil {
		return err
	}
	if _, err := a.ensurePods(ctx, rec); err != nil {
		return err
	}
	if err := a.removeNodesBeyond(ctx, rec, podWait); err != nil {
		return err
	}
	if a.kubelet {
		if err := a.applyChaos(ctx, rec); err != nil {
			return err
		}
	}
	return a.annotateNodes(ctx, rec, rec.Nodes)
}

// removeNodesBeyond deletes the cluster's Nodes numbered above rec.Nodes, with the Pods bound
// to them first and their Leases after.
func (a *mainAPI) removeNodesBeyond(ctx context.Context, rec Record, podWait time.Duration) error {
	list, err := a.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: NodeSelector(rec.Name)})
	if err != nil {
		return err
	}
	var gone []string
	for _, n := range list.Items {
		if i, ok := nodeIndex(rec.Name, n.Name); !ok || i > rec.Nodes {
			gone = append(gone, n.Name)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	if err := a.deletePods(ctx, rec.Name, podWait, func(ctx context.Context) ([]corev1.Pod, error) { return a.boundPods(ctx, gone) }); err != nil {
		return err
	}
	for _, n := range gone {
		if err := a.kube.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete node %s: %w", n, err)
		}
		// No garbage collector runs: the Lease (owned by the Node) goes by hand.
		if err := a.kube.NodeLeases().Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete the lease of node %s: %w", n, err)
		}
	}
	return nil
}

func podIndex(cluster, pod string) (int, bool) {
	return suffixIndex(pod, cluster+"-pod-")
}

func nodeIndex(cluster, node string) (int, bool) {
	return suffixIndex(node, cluster+"-node")
}

func suffixIndex(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	return i, err == nil && i > 0
}
