package vclusters

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Chaos: a Node stops heartbeating when the tool takes its Lease (kube-node-lease/<node>) from
// KWOK: held by another identity for a long duration, the Lease is neither renewed by KWOK —
// whose controller then treats the Node and its Pods as read-only — nor by anyone else, so the
// node-lifecycle controller finds no heartbeat and, after its grace period, marks the Node
// NotReady (Ready=Unknown, "Kubelet stopped posting node status"), as for a kubelet that died.
// Giving it back deletes the Lease: KWOK creates a new one, manages the Node again and its
// node-initialize stage makes it Ready.

// chaosHolder is the holder identity of the Leases the tool takes.
const chaosHolder = "site-agent-vclusters-chaos"

// chaosLeaseSeconds keeps a taken Lease from expiring (KWOK takes over expired Leases): ten years.
const chaosLeaseSeconds = 10 * 365 * 24 * 3600

// ErrNoKubelet is returned for chaos without a kubelet stand-in (kwok.mode off).
var ErrNoKubelet = errors.New("chaos needs a kubelet stand-in (kwok.mode run or external): without one no Node heartbeats")

// Chaos makes the cluster's last notReady Nodes stop heartbeating and lets the others heartbeat.
func (m *Manager) Chaos(ctx context.Context, name string, notReady int) (View, error) {
	if !m.main.kubelet {
		return View{}, ErrNoKubelet
	}
	rec, err := m.resize(name, func(r *Record) error {
		if notReady < 0 || notReady > r.Nodes {
			return fmt.Errorf("%w: notready must be between 0 and the cluster's %d nodes, got %d", ErrInvalidSize, r.Nodes, notReady)
		}
		r.NotReady = notReady
		return nil
	})
	if err != nil {
		return View{}, err
	}
	if rec.Step != StepNone {
		if err := m.main.applyChaos(ctx, rec); err != nil {
			return View{}, err
		}
	}
	m.log.Info("virtual cluster nodes told to stop heartbeating", zap.String("cluster", name), zap.Int("notready", notReady))
	v, _ := m.Get(name)
	return v, nil
}

// applyChaos takes the Leases of the last rec.NotReady Nodes and gives back the others'.
func (a *mainAPI) applyChaos(ctx context.Context, rec Record) error {
	for i := 1; i <= rec.Nodes; i++ {
		var err error
		if i > rec.Nodes-rec.NotReady {
			err = a.holdLease(ctx, nodeName(rec.Name, i))
		} else {
			err = a.releaseLease(ctx, nodeName(rec.Name, i))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (a *mainAPI) holdLease(ctx context.Context, node string) error {
	leases := a.kube.NodeLeases()
	now := metav1.NewMicroTime(time.Now())
	for attempt := 0; ; attempt++ {
		l, err := leases.Get(ctx, node, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: "kube-node-lease"}}
			holdSpec(l, now)
			_, err = leases.Create(ctx, l, metav1.CreateOptions{})
		} else if err == nil {
			if l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == chaosHolder {
				return nil
			}
			holdSpec(l, now)
			_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		}
		if (apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)) && attempt < 5 {
			continue // KWOK renewed it meanwhile
		}
		if err != nil {
			return fmt.Errorf("take the lease of node %s: %w", node, err)
		}
		return nil
	}
}

func holdSpec(l *coordinationv1.Lease, now metav1.MicroTime) {
	holder, seconds := chaosHolder, int32(chaosLeaseSeconds)
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = &holder, &seconds, &now
}

func (a *mainAPI) releaseLease(ctx context.Context, node string) error {
	l, err := a.kube.NodeLeases().Get(ctx, node, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("lease of node %s: %w", node, err)
	case l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != chaosHolder:
		return nil
	}
	err = a.kube.NodeLeases().Delete(ctx, node, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &l.ResourceVersion}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("give back the lease of node %s: %w", node, err)
	}
	return nil
}

// heldByChaos reports whether the tool holds the Node's Lease (so KWOK leaves the Node alone),
// as the API server's watch cache has it.
func (a *mainAPI) heldByChaos(ctx context.Context, node string) bool {
	l, err := a.kube.NodeLeases().Get(ctx, node, cached)
	return err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == chaosHolder
}
