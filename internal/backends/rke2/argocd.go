package rke2

import (
	"context"
	"fmt"
)

// registerArgo tells ArgoCD about a ready cluster (when the offering configures ArgoCD). The
// secret is made once, with a kubeconfig Rancher mints for it; later passes only keep its
// labels in step.
func (b *Backend) registerArgo(ctx context.Context, c *cluster) error {
	if b.d.ArgoCD == nil {
		return nil
	}
	ac := ArgoCluster{UUID: c.ref.UUID, Name: c.ref.Name, Longhorn: c.spec.InstallLonghorn}
	mint := func(ctx context.Context) (Kubeconfig, error) { return b.d.Rancher.Kubeconfig(ctx, c.rc) }
	if err := b.d.ArgoCD.Ensure(ctx, ac, mint); err != nil {
		return fmt.Errorf("register with argocd: %w", err)
	}
	return nil
}

// unregisterArgo removes the cluster's ArgoCD secret (terminate).
func (b *Backend) unregisterArgo(ctx context.Context, c ClusterRef) error {
	if b.d.ArgoCD == nil {
		return nil
	}
	if err := b.d.ArgoCD.Remove(ctx, c.UUID); err != nil {
		return fmt.Errorf("unregister from argocd: %w", err)
	}
	return nil
}
