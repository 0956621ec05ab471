package rke2

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
)

// Delete terminates the cluster: first what others made in its project or on its network
// (refused, naming it, unless force_destroy: nothing is deleted then), its VMs (with their volumes), the Rancher cluster (with its
// nodes, tokens and bindings), the Vault objects, then the network chain. Draining first would
// only delay the end of a cluster that goes as a whole. Every step is repeatable; Rancher's
// deletion takes a while, during which the call returns an error wrapping failure.ErrNotReady
// and the next cycle continues.
func (b *Backend) Delete(ctx context.Context, res backends.Resource) error {
	c := ClusterRef{UUID: res.UUID, Name: res.BackendID}
	defer b.day2.lock(c.UUID)()
	log := backends.Log(backends.ForResource(ctx, c.UUID), b.d.Log).With(zap.String("cluster", c.Name), zap.String("resource", c.UUID))
	if err := b.d.Infra.ClearLeftovers(ctx, c); err != nil {
		return fmt.Errorf("openstack leftovers: %w", err)
	}
	servers, err := b.d.Infra.Servers(ctx, c)
	if err != nil {
		return fmt.Errorf("list servers: %w", err)
	}
	for _, s := range servers {
		if err := b.d.Infra.DeleteServer(ctx, c, s); err != nil {
			return fmt.Errorf("delete server %s: %w", s.Name, err)
		}
		log.Info("server deleted", zap.String("server", s.Name))
	}
	if err := b.unregisterArgo(ctx, c); err != nil {
		return err
	}
	b.forgetCluster(c.UUID)
	if err := b.d.Rancher.DeleteCluster(ctx, c); err != nil {
		return fmt.Errorf("delete rancher cluster: %w", err)
	}
	if err := b.d.Vault.Remove(ctx, c.UUID); err != nil {
		return fmt.Errorf("remove vault objects: %w", err)
	}
	b.day2.setVault(c.UUID, false)
	if err := b.d.Infra.TearDown(ctx, c); err != nil {
		return fmt.Errorf("network: %w", err)
	}
	log.Info("cluster terminated")
	return nil
}
