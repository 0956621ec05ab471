package rke2

import (
	"context"
	"fmt"

	"go.uber.org/zap"
)

// memberGone makes sure a server's etcd member has been removed before the executor deletes its
// VM or forgets its node. etcd keeps a member whose machine is gone until it is removed (its
// membership changes only through MemberRemove), so a VM deleted first leaves a dead voter: a
// 3 → 1 scale-down done that way leaves 1 live member of 3, without quorum. The member is
// removed through the cluster (Rancher.RemoveEtcdMember: RKE2's managed-etcd controller, or
// Rancher deleting the machine) and the call returns an ErrNotReady error until the cluster
// confirms it; the planner starts no other server change meanwhile (the node stays leaving).
//
// No removal is asked when no other server VM of the cluster exists: the last member goes with
// the cluster's data, and a cluster without a live control plane could not answer anyway.
func (b *Backend) memberGone(ctx context.Context, c *cluster, a Action, servers map[string]ServerView) error {
	if a.Inventory.Role != RoleServer || !otherServers(a.Node, servers) {
		return nil
	}
	gone, err := b.d.Rancher.RemoveEtcdMember(ctx, c.rc, a.Node)
	if err != nil {
		return fmt.Errorf("remove the etcd member: %w", err)
	}
	if !gone {
		c.log.Info("waiting for the etcd member to be removed", zap.String("node", a.Node))
		return notReady(c.ref, "waiting for etcd to remove server %s's member before its VM is deleted", a.Node)
	}
	return nil
}

// otherServers: a server VM of the cluster other than name exists.
func otherServers(name string, servers map[string]ServerView) bool {
	for n, v := range servers {
		if n == name {
			continue
		}
		if inv, ok, err := InventoryFromMetadata(v.Metadata); ok && err == nil && inv.Role == RoleServer {
			return true
		}
	}
	return false
}
