package rke2

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/waldur/site-agent/internal/failure"
)

// A call that only waits — a node booting, registering or installing, nothing to create,
// remove or finish — needs of the Rancher cluster only its management id, which never changes,
// and its state, which only judges nodes that have not registered. So an order's calls take
// the Rancher cluster an earlier call of this process read, and read it afresh (EnsureCluster)
// only when they act on the plan or find the cluster done: half of a Create's calls wait, and
// each saved a Rancher request. The first call of an order in a process, and any call after
// clusterMemoTTL, reads it as before.

// clusterMemoTTL bounds how old a remembered Rancher cluster may be.
const clusterMemoTTL = 10 * time.Minute

// rememberedCluster is a Rancher cluster read at a time.
type rememberedCluster struct {
	rc RancherCluster
	at time.Time
}

// rancherCluster sets c.rc: the one remembered for the cluster (c.rcFresh false), else read
// (or made) now.
func (b *Backend) rancherCluster(ctx context.Context, c *cluster) error {
	if rc, ok := b.rememberedCluster(c.ref); ok {
		c.rc, c.rcFresh = rc, false
		return nil
	}
	return b.readCluster(ctx, c)
}

// rememberedCluster is the Rancher cluster remembered for ref, with its management id, read
// less than clusterMemoTTL ago.
func (b *Backend) rememberedCluster(ref ClusterRef) (RancherCluster, bool) {
	b.day2.mu.Lock()
	m, ok := b.day2.clusters[ref.UUID]
	b.day2.mu.Unlock()
	if ok && m.rc.Name == ref.Name && m.rc.ManagementID != "" && time.Since(m.at) < clusterMemoTTL {
		return m.rc, true
	}
	return RancherCluster{}, false
}

// managementCluster is what a team binding needs of the Rancher cluster — its management id —
// remembered, else read now (Rancher.Cluster: the cluster must exist and be the resource's).
func (b *Backend) managementCluster(ctx context.Context, ref ClusterRef) (RancherCluster, error) {
	if rc, ok := b.rememberedCluster(ref); ok {
		return rc, nil
	}
	rc, err := b.d.Rancher.Cluster(ctx, ref)
	if err == nil && rc.ManagementID != "" {
		b.day2.mu.Lock()
		b.day2.clusters[ref.UUID] = rememberedCluster{rc: rc, at: time.Now()}
		b.day2.mu.Unlock()
	}
	return rc, err
}

// readCluster reads (or makes) the Rancher cluster now and remembers it once it has its id.
func (b *Backend) readCluster(ctx context.Context, c *cluster) error {
	rc, err := b.d.Rancher.EnsureCluster(ctx, c.ref, b.provisionSpec())
	if err != nil {
		b.forgetCluster(c.ref.UUID)
		if errors.Is(err, failure.ErrDuplicate) {
			return failure.Errorf("a Rancher cluster named %q already belongs to another resource; choose another name", c.ref.Name)
		}
		return fmt.Errorf("rancher cluster: %w", err)
	}
	c.rc, c.rcFresh = rc, true
	if rc.ManagementID != "" {
		b.day2.mu.Lock()
		b.day2.clusters[c.ref.UUID] = rememberedCluster{rc: rc, at: time.Now()}
		b.day2.mu.Unlock()
	}
	return nil
}

// forgetCluster drops the remembered Rancher cluster.
func (b *Backend) forgetCluster(uuid string) {
	b.day2.mu.Lock()
	delete(b.day2.clusters, uuid)
	b.day2.mu.Unlock()
}

// freshen reads the Rancher cluster before a pass acts — deletes strays, carries out the
// plan's actions, finds it done or refuses it — on what it observed with a remembered one. again: the pass
// observed with what Rancher no longer says — another management id (the nodes were listed
// under the old one), or another state while a node was judged unregistered by it
// (markUnregistered) — and must observe again.
func (b *Backend) freshen(ctx context.Context, c *cluster, obs Observed, plan Plan) (again bool, err error) {
	if c.rcFresh || (len(obs.Strays) == 0 && !plan.Done && len(plan.Actions) == 0 && len(plan.Refusals) == 0) {
		return false, nil
	}
	old := c.rc
	if err := b.readCluster(ctx, c); err != nil {
		return false, err
	}
	if c.rc.ManagementID != old.ManagementID {
		return true, nil
	}
	if c.rc.State != old.State {
		for _, n := range obs.Nodes {
			if n.Unregistered {
				return true, nil
			}
		}
	}
	return false, nil
}
