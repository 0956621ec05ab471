package rke2

import (
	"context"
	"fmt"
	"strings"

	"go.uber.org/zap"
)

// clusterName is the name of the resource's cluster: its backend id when Waldur knows it;
// else the name of a cluster made earlier for the resource (locate), which is adopted, not
// made twice; else the order's name.
func (b *Backend) clusterName(ctx context.Context, res ClusterRef, backendID string) (string, error) {
	if backendID != "" {
		return backendID, nil
	}
	found, err := b.locate(ctx, res.UUID)
	if err != nil {
		return "", fmt.Errorf("look for a cluster made earlier for the resource: %w", err)
	}
	if found == "" {
		return res.Name, nil
	}
	if found != res.Name {
		b.d.Log.Info("adopting the cluster made earlier for this resource under another name",
			zap.String("resource", res.UUID), zap.String("cluster", found), zap.String("order_name", res.Name))
	}
	return found, nil
}

// locate finds a cluster made earlier for the resource whose name Waldur no longer knows — an
// earlier agent made it and its backend id and metadata were lost, and the resource may have
// been renamed since (seed 002 §7: what exists is discovered, not made again): the provisioning
// cluster labelled with the resource's UUID, else the cluster its servers (tagged with the
// UUID) are named after. "" when nothing of it exists.
func (b *Backend) locate(ctx context.Context, uuid string) (string, error) {
	name, err := b.d.Rancher.ClusterOf(ctx, uuid)
	if err != nil || name != "" {
		return name, err
	}
	servers, err := b.d.Infra.Servers(ctx, ClusterRef{UUID: uuid})
	if err != nil {
		return "", err
	}
	for _, s := range servers {
		inv, ok, err := InventoryFromMetadata(s.Metadata)
		if !ok || err != nil || inv.Cluster != uuid {
			continue
		}
		base, cut := strings.CutSuffix(s.Name, fmt.Sprintf("-%s-%d", inv.Role, inv.Index))
		if cut && dnsLabelRe.get().MatchString(base) {
			return base, nil
		}
	}
	return "", nil
}
