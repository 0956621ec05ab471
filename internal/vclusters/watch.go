package vclusters

import (
	"context"
	"time"

	"github.com/waldur/site-agent/internal/vclusters/tunnel"
	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// markDirty asks the saver to write the state file soon.
func (m *Manager) markDirty() {
	select {
	case m.dirty <- struct{}{}:
	default:
	}
}

// saver coalesces state changes into at most one write per 200 ms.
func (m *Manager) saver(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.dirty:
		}
		if err := m.saveNow(); err != nil {
			m.log.Error("state file not written", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// saveNow writes the state file.
func (m *Manager) saveNow() error {
	m.saveMu.Lock()
	defer m.saveMu.Unlock()
	m.mu.Lock()
	records := make([]Record, 0, len(m.clusters))
	for _, c := range m.clusters {
		records = append(records, c.rec)
	}
	m.mu.Unlock()
	return m.state.save(records)
}

// deletionWatcher removes the clusters Rancher no longer has: every deletion_interval, and at
// once when a tunnel handshake is refused.
func (m *Manager) deletionWatcher(ctx context.Context) {
	every(ctx, m.cfg.Sync.DeletionInterval, m.deletion, func() { m.reconcileWithRancher(ctx) })
}

// every calls fn every d, and at once on each receive from wake (nil: never), until ctx ends.
func every(ctx context.Context, d time.Duration, wake <-chan struct{}, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
		fn()
	}
}

// reconcileWithRancher removes the clusters Rancher no longer lists and asks for a new
// handshake of those whose registration Rancher has lost (registrationLost).
func (m *Manager) reconcileWithRancher(ctx context.Context) {
	// Only clusters imported before the list was asked for can be missing from it.
	m.mu.Lock()
	known := map[string]string{}
	for name, c := range m.clusters {
		if c.rec.RancherID != "" && !c.deleting {
			known[name] = c.rec.RancherID
		}
	}
	m.mu.Unlock()
	reqCtx, cancel := context.WithTimeout(ctx, m.cfg.Rancher.Timeout)
	all, err := rancherClusters(reqCtx, m.rancher)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			m.met.Errors.WithLabelValues("deletion_watch").Inc()
			m.log.Warn("cannot list rancher clusters for the deletion watcher", zap.Error(err))
		}
		return
	}
	m.mu.Lock()
	var gone []string
	for name, id := range known {
		c := m.clusters[name]
		if c == nil || c.rec.RancherID != id || c.deleting {
			continue
		}
		rc, found := all[id]
		if !found {
			gone = append(gone, name)
		} else if registrationLost(rc) {
			m.reregisterLocked(c)
		}
	}
	m.mu.Unlock()
	for _, name := range gone {
		m.log.Info("rancher deleted the cluster, removing it", zap.String("cluster", name))
		delCtx, cancel := context.WithTimeout(ctx, time.Minute)
		if err := m.Delete(delCtx, name, true); err != nil && ctx.Err() == nil {
			m.log.Warn("removing a cluster deleted in rancher failed", zap.String("cluster", name), zap.Error(err))
		}
		cancel()
	}
}

// reregisterLocked reconnects the tunnels of a cluster whose agent session has been up for two
// passes of the deletion watcher (1 minute by default) but whose Rancher record has no API
// endpoint, at most once in ten passes. Rancher records the agent's parameters
// (driver "imported", API endpoint, CA, token Secret) at every tunnel handshake (rancher v2.12.0
// pkg/tunnelserver/mcmauthorizer/tunnel.go authorizeCluster); a real Rancher under load (100
// clusters being imported on 2 cores) once kept a connected cluster without them, pending with
// "Waiting for API to be available" for over 15 minutes, until a new handshake recorded them
// and it turned active within seconds. m.mu held.
func (m *Manager) reregisterLocked(c *cluster) {
	pass := m.cfg.Sync.DeletionInterval
	if !c.up[tunnel.Agent] || c.tun == nil || time.Since(c.connectedAt) < 2*pass || time.Since(c.reregistered) < 10*pass {
		return
	}
	c.reregistered = time.Now()
	m.met.Errors.WithLabelValues("rancher_registration").Inc()
	m.log.Warn("rancher shows the connected cluster without the agent's parameters, reconnecting its tunnels",
		zap.String("cluster", c.rec.Name), zap.String("rancher_cluster", c.rec.RancherID))
	go c.tun.Reconnect()
}

// recreateNodes makes the missing Nodes of a cluster, with its size as it is now.
func (m *Manager) recreateNodes(ctx context.Context, name string) error {
	m.mu.Lock()
	c := m.clusters[name]
	m.mu.Unlock()
	if c == nil {
		return nil
	}
	c.tenant.Lock()
	defer c.tenant.Unlock()
	m.mu.Lock()
	rec, deleting := c.rec, c.deleting
	m.mu.Unlock()
	if deleting {
		return nil
	}
	_, err := m.main.ensureNodes(ctx, rec)
	return err
}

// driftLoop re-patches Node status that drifted from the template and re-creates Nodes that
// disappeared, for clusters whose tenant is in place.
func (m *Manager) driftLoop(ctx context.Context) {
	every(ctx, m.cfg.Sync.NodeStatusInterval, nil, func() {
		if err := m.repairDrift(ctx); err != nil && ctx.Err() == nil {
			m.met.Errors.WithLabelValues("drift").Inc()
			m.log.Warn("node drift check failed", zap.Error(err))
		}
	})
}

func (m *Manager) repairDrift(ctx context.Context) error {
	nodes, err := m.main.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: LabelManagedBy + "=" + ManagedBy})
	if err != nil {
		return err
	}
	seen := map[string]int{}
	m.mu.Lock()
	owners := map[string]Record{}
	for name, c := range m.clusters {
		if c.rec.Step != StepNone && !c.deleting {
			owners[name] = c.rec
		}
	}
	m.mu.Unlock()
	for i := range nodes.Items {
		n := &nodes.Items[i]
		rec, ok := owners[n.Labels[LabelLogicalCluster]]
		if !ok {
			continue
		}
		seen[rec.Name]++
		if m.cfg.Template.statusDrifted(n) {
			m.log.Info("node status drifted from the template", zap.String("cluster", rec.Name), zap.String("node", n.Name))
			if err := m.main.patchNodeStatus(ctx, rec.Name, n.Name); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			m.met.DriftRepairs.Inc()
		}
	}
	for name, rec := range owners {
		if seen[name] < rec.Nodes {
			m.log.Info("virtual cluster nodes missing, re-creating them", zap.String("cluster", name))
			if err := m.recreateNodes(ctx, name); err != nil {
				return err
			}
			m.met.DriftRepairs.Inc()
		}
	}
	return nil
}
