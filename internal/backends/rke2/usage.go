package rke2

import (
	"context"
	"errors"
	"fmt"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// Usage components the backend measures, from Rancher's cluster capacity, in backend units; a
// component is reported when the offering has one of that name.
const (
	UsageNodes   = "nodes"   // node count
	UsageCPU     = "cpu"     // vCPU (cores)
	UsageRAM     = "ram"     // memory, GiB
	UsageStorage = "storage" // the nodes' ephemeral storage, GiB
)

const gib = 1 << 30

// UsageIsGauge: node counts and capacity are current values; they go down when a cluster is
// scaled down within a month.
func (b *Backend) UsageIsGauge() bool { return true }

// Usage reports each cluster's capacity now (the report mode sends it as the month's usage).
// A cluster Rancher does not know (terminated, or never made) has no entry.
func (b *Backend) Usage(ctx context.Context, resources []backends.Resource, _ backends.Period, _ bool) (map[string]backends.Usage, error) {
	out := map[string]backends.Usage{}
	for _, r := range resources {
		if r.BackendID == "" {
			continue
		}
		rc, err := b.d.Rancher.Cluster(ctx, ClusterRef{UUID: r.UUID, Name: r.BackendID})
		if errors.Is(err, failure.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", r.BackendID, err)
		}
		if rc.ManagementID == "" {
			continue
		}
		c, err := b.d.Rancher.Capacity(ctx, rc)
		if err != nil {
			return nil, fmt.Errorf("cluster %s capacity: %w", r.BackendID, err)
		}
		if total := b.usageOf(c); len(total) > 0 {
			out[r.BackendID] = backends.Usage{Total: total}
		}
	}
	return out, nil
}

func (b *Backend) usageOf(c Capacity) backends.Quantities {
	all := map[string]float64{
		UsageNodes: float64(c.Nodes), UsageCPU: float64(c.CPUMillis) / 1000,
		UsageRAM: float64(c.MemoryBytes) / gib, UsageStorage: float64(c.StorageBytes) / gib,
	}
	q := backends.Quantities{}
	for _, comp := range b.components {
		if v, ok := all[comp.Name]; ok && comp.AccountingType == "usage" {
			q[comp.Name] = v
		}
	}
	return q
}
