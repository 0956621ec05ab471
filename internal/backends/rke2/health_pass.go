package rke2

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// Health after the order is done (issue 17 item 10). Membership sync calls Reconcile for every
// OK or Erred resource on each pass, then Metadata. A pass observes the cluster (Nova's servers
// and Rancher's nodes: two lists and the provisioning cluster when it is well), reports every
// node's state in the resource's metadata, repairs what the planner would — a VM in ERROR, a
// node NotReady past node_repair_after, a lost port or volume: replaced in stages, servers one
// at a time, each etcd member removed first — and rolls out a changed k8s_version setting. A
// cluster that cannot serve (no etcd quorum, no Ready agent) makes Reconcile fail with the
// reason, so the resource is marked erred; it is OK again on the first pass that finds it
// serving. A cluster annotated reconcile=paused is only reported.

// Reconcile implements backends.Reconciler.
func (b *Backend) Reconcile(ctx context.Context, res backends.Resource) error {
	b.day2.take(res.UUID) // what an earlier pass left is not this pass's
	if res.BackendID == "" {
		return nil
	}
	unlock, ok := b.day2.tryLock(res.UUID)
	if !ok {
		return nil // an order is working on the cluster; the next pass looks
	}
	defer unlock()
	c, obs, h, err := b.checkHealth(ctx, res)
	if err != nil {
		return err
	}
	md := b.metadata(c, h, obs.Nodes)
	if !c.rc.Paused {
		note, err := b.heal(ctx, c, res, obs, h)
		if err != nil && h.Serving {
			return err
		}
		for k, v := range note {
			if k != "stage" || h.Serving { // a cluster that cannot serve stays "down"
				md[k] = v
			}
		}
	}
	b.day2.remember(res.UUID, md)
	if !h.Serving {
		return failure.Errorf("cluster %s cannot serve: %s", c.ref.Name, h.Reason)
	}
	return nil
}

// Metadata implements backends.MetadataReader: what this pass's Reconcile found (nil when it
// found nothing new to say: an order is working on the cluster).
func (b *Backend) Metadata(_ context.Context, res backends.Resource) (map[string]any, error) {
	return b.day2.take(res.UUID), nil
}

// checkHealth observes the cluster and judges it. A cluster Rancher no longer has is a public
// error (the resource is marked erred with it).
func (b *Backend) checkHealth(ctx context.Context, res backends.Resource) (*cluster, Observed, ClusterHealth, error) {
	ref := ClusterRef{UUID: res.UUID, Name: res.BackendID}
	rc, err := b.d.Rancher.Cluster(ctx, ref)
	if errors.Is(err, failure.ErrNotFound) {
		why := fmt.Sprintf("Rancher has no cluster %s for this resource (deleted outside Waldur?)", ref.Name)
		b.day2.remember(res.UUID, map[string]any{"stage": "missing", "health": "down", "health_reason": why})
		return nil, Observed{}, ClusterHealth{}, failure.Errorf("%s", why)
	}
	if err != nil {
		return nil, Observed{}, ClusterHealth{}, fmt.Errorf("rancher cluster: %w", err)
	}
	c := &cluster{ref: ref, rc: rc, whole: map[string]bool{}, readOnly: rc.Paused,
		log: backends.Log(backends.ForResource(ctx, res.UUID), b.d.Log).With(zap.String("cluster", ref.Name), zap.String("resource", res.UUID))}
	if rc.ManagementID == "" {
		return nil, Observed{}, ClusterHealth{}, notReady(ref, "waiting for Rancher to assign the cluster's id")
	}
	obs, _, _, err := b.observe(ctx, c)
	if err != nil {
		return nil, Observed{}, ClusterHealth{}, err
	}
	h := Assess(obs.Nodes)
	if !h.Serving {
		c.log.Warn("cluster cannot serve", zap.String("reason", h.Reason))
	}
	return c, obs, h, nil
}

// heal repairs what the planner finds to repair, finishes a repair that completed since the
// last pass, and starts a k8s_version setting's upgrade on a settled, serving cluster. It
// returns metadata notes (a repair the planner refuses, an upgrade not applied).
func (b *Backend) heal(ctx context.Context, c *cluster, res backends.Resource, obs Observed, h ClusterHealth) (map[string]any, error) {
	spec, err := ParseSpec(b.s, res)
	if err != nil {
		c.log.Warn("the resource's attributes do not describe the cluster; no repair", zap.Error(err))
		return map[string]any{"repair": "not possible: " + err.Error()}, nil
	}
	spec.Name = res.BackendID
	d := Desired{Cluster: res.UUID, Name: spec.Name, Servers: spec.Servers, Agents: spec.Agents, ViaRancher: b.s.Bootstrap == BootstrapRancher}
	plan := PlanPass(d, obs.Nodes)
	switch {
	case plan.Done && b.day2.vaultWritten(res.UUID):
		c.spec = &spec
		_, err := b.finish(ctx, c, backends.Info{}, obs.Nodes) // a repair completed: its bootstrap access goes
		return nil, err
	case plan.Done:
		return b.rollSetting(ctx, c, obs, h)
	case len(plan.Actions) == 0 && !h.Degraded() && h.Serving:
		return map[string]any{"stage": "repairing"}, nil // a new node installing
	case len(plan.Actions) == 0:
		return nil, nil // waiting (a NotReady node within its grace): reported only
	}
	c.log.Info("repairing the cluster", zap.String("actions", describeActions(plan.Actions)))
	repairing := map[string]any{"stage": "repairing"}
	_, err = b.reconcile(ctx, res.UUID, &spec, "")
	switch {
	case err == nil, errors.Is(err, failure.ErrNotReady):
		return repairing, nil
	case failure.IsTransient(err):
		return repairing, err
	}
	msg, _ := failure.PublicMessage(err)
	c.log.Warn("repair refused", zap.Error(err))
	return map[string]any{"repair": "blocked: " + msg}, nil
}

// rollSetting starts the upgrade a changed k8s_version setting asks for, when the cluster
// serves and no node is missing; the upgrade is then Rancher's, followed by later passes.
func (b *Backend) rollSetting(ctx context.Context, c *cluster, obs Observed, h ClusterHealth) (map[string]any, error) {
	target, blocked := b.settingUpgrade(c.rc, obs.Nodes)
	switch {
	case blocked != "":
		return map[string]any{"k8s_version_setting": blocked}, nil
	case target == "" || !h.Serving || h.Degraded():
		return nil, nil
	}
	if err := b.d.Rancher.SetK8sVersion(ctx, c.ref, c.rc, target, b.upgradeStrategy()); err != nil {
		return nil, fmt.Errorf("ask rancher to upgrade to %s: %w", target, err)
	}
	c.log.Info("kubernetes upgrade asked for (the k8s_version setting changed)", zap.String("to", target))
	return map[string]any{"k8s_version": target, "stage": "upgrading"}, nil
}

// metadata is what the resource shows of its cluster: Rancher's ids, the release, the node
// counts, the health verdict and each node's state. Maps only, so its JSON is the same as what
// Waldur gives back (an unchanged cluster is not written again).
func (b *Backend) metadata(c *cluster, h ClusterHealth, nodes []Node) map[string]any {
	version := currentVersion(c.rc, nodes)
	health, stage := "ok", ClusterReady
	switch {
	case !h.Serving:
		health, stage = "down", "down"
	case h.Degraded():
		health, stage = "degraded", "degraded"
	}
	if rolling(version, nodes) {
		stage = "upgrading"
	}
	if c.rc.Paused {
		stage = "paused"
	}
	list := make([]any, 0, len(h.Nodes))
	for _, n := range h.Nodes {
		m := map[string]any{"name": n.Name, "role": n.Role, "vm_state": n.VM, "kubernetes": n.Kubernetes}
		if n.Version != "" {
			m["version"] = n.Version
		}
		if n.NotReadySince != "" {
			m["not_ready_since"] = n.NotReadySince
		}
		list = append(list, m)
	}
	md := map[string]any{"rancher_cluster_id": c.rc.ManagementID, "rancher_cluster_name": c.rc.Name, "stage": stage,
		"health": health, "servers": h.Servers, "agents": h.Agents, "ready_servers": h.ReadyServers,
		"ready_agents": h.ReadyAgents, "k8s_version": version, "nodes": list}
	if h.Reason != "" {
		md["health_reason"] = h.Reason
	}
	return md
}
