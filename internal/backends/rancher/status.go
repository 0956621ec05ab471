package rancher

import (
	"context"
	"errors"
	"math"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// quotaMode is what the namespace quota holds: the resource's limits, or temporary amounts while
// the resource is paused or downscaled. It is recorded on the quota (waldur/status), so every
// path that writes the quota — Create, Update, Reconcile and the status changes — keeps it.
type quotaMode string

const (
	modeNormal     quotaMode = ""
	modePaused     quotaMode = "paused"     // the limits plus pods: 0 — no new pods are admitted
	modeDownscaled quotaMode = "downscaled" // the limits × downscale_factor, rounded down
	modeKeep       quotaMode = "keep"       // whatever the quota records (Reconcile, Update)
)

// Pause implements backends.StatusController: the namespace quota admits no new pods (pods: 0,
// the limits kept); running pods are left alone, as evicting them is the site's decision.
func (b *Backend) Pause(ctx context.Context, res backends.Resource) error {
	return b.applyMode(ctx, res, modePaused)
}

// Downscale implements backends.StatusController: the quota gets the limits multiplied by
// downscale_factor (default 0.5), rounded down (whole GPUs, millicores, MiB).
func (b *Backend) Downscale(ctx context.Context, res backends.Resource) error {
	return b.applyMode(ctx, res, modeDownscaled)
}

// Restore implements backends.StatusController: the quota gets the limits back. It is called on
// every membership pass for resources that are neither paused nor downscaled and costs no
// request then (the pass's cluster listing shows the quota holds no temporary amounts).
func (b *Backend) Restore(ctx context.Context, res backends.Resource) error {
	return b.applyMode(ctx, res, modeNormal)
}

// applyMode brings the quota into mode through ensureQuota, the path Create, Update and
// Reconcile use.
func (b *Backend) applyMode(ctx context.Context, res backends.Resource, mode quotaMode) error {
	inv, err := b.inventory(ctx)
	if err != nil {
		return err
	}
	p, listed := inv.projects[res.BackendID]
	if !listed {
		if p, err = b.project(ctx, res.BackendID); err != nil {
			return err
		}
	}
	var have *corev1.ResourceQuota
	if listed && len(inv.namespaces[p.ID]) > 0 {
		have = inv.quotas[p.Name]
		if mode == modeNormal && (have == nil || have.Annotations[annStatus] == "") {
			return nil // nothing temporary to undo; Reconcile keeps the limits
		}
	}
	_, changed, err := b.ensureQuota(ctx, p.Name, res.Limits, have, false, mode)
	if changed {
		b.logger(ctx).Info("resource quota status applied", zap.String("project", p.ID), zap.String("status", string(mode)))
		b.invalidate()
	}
	return err
}

// desiredHard is spec.hard for limits (backend units) in a mode.
func (b *Backend) desiredHard(limits backends.Quantities, mode quotaMode) (corev1.ResourceList, error) {
	if mode == modeDownscaled {
		limits = b.scaled(limits)
	}
	hard, err := b.cfg.quotaKeys.hard(limits)
	if err == nil && mode == modePaused {
		hard[corev1.ResourcePods] = *resource.NewQuantity(0, resource.DecimalSI)
	}
	return hard, err
}

// scaled multiplies the quota components by downscale_factor, rounding down to what a quota
// holds (millicores, MiB, whole units).
func (b *Backend) scaled(limits backends.Quantities) backends.Quantities {
	out := limits.Clone()
	for _, k := range b.cfg.quotaKeys {
		v, ok := out[k.Component]
		if !ok {
			continue
		}
		v *= b.cfg.downscale
		switch k.Kind {
		case kindCores:
			v = math.Floor(v*1000) / 1000
		case kindGiB:
			v = math.Floor(v*1024) / 1024
		default:
			v = math.Floor(v)
		}
		out[k.Component] = v
	}
	return out
}

// ensureQuota creates or corrects custom-resource-quota in ns from limits (backend units) in a
// mode (modeKeep: the one the quota records). Without quota components (and not paused) it
// creates nothing. have, when non-nil, is the quota as already read; createFirst tries the
// create before reading. It returns the spec.hard now in force and whether it changed it.
func (b *Backend) ensureQuota(ctx context.Context, ns string, limits backends.Quantities, have *corev1.ResourceQuota,
	createFirst bool, mode quotaMode) (corev1.ResourceList, bool, error) {
	if have == nil {
		q, hard, created, err := b.findOrCreateQuota(ctx, ns, limits, createFirst, mode)
		if q == nil || err != nil {
			return hard, created, err
		}
		have = q
	}
	if mode == modeKeep {
		mode = quotaMode(have.Annotations[annStatus])
	}
	hard, err := b.desiredHard(limits, mode)
	if err != nil {
		return nil, false, err
	}
	switch {
	case sameHard(have.Spec.Hard, hard) && have.Annotations[annStatus] == string(mode):
		return hard, false, nil
	case len(hard) == 0 && have.Annotations[annStatus] == "":
		return nil, false, nil // no quota components: a quota filled by someone else is left alone
	}
	if err := b.kube.setQuota(ctx, have, hard, string(mode)); err != nil {
		return nil, false, err
	}
	b.logger(ctx).Info("resource quota updated", zap.String("namespace", ns), zap.String("status", string(mode)))
	return hard, true, nil
}

// findOrCreateQuota reads the quota, or creates it (create first with createFirst). It returns
// the quota when one existed, else what it created (or nothing, when there is nothing to hold).
func (b *Backend) findOrCreateQuota(ctx context.Context, ns string, limits backends.Quantities, createFirst bool,
	mode quotaMode) (have *corev1.ResourceQuota, hard corev1.ResourceList, created bool, err error) {
	keep := mode == modeKeep
	if keep {
		mode = modeNormal // a quota that does not exist records nothing
	}
	if hard, err = b.desiredHard(limits, mode); err != nil {
		return nil, nil, false, err
	}
	if len(hard) == 0 && mode == modeNormal && (createFirst || keep) {
		return nil, nil, false, nil // nothing to hold, nothing temporary to undo
	}
	if !createFirst {
		q, err := b.kube.quota(ctx, ns)
		if !errors.Is(err, failure.ErrNotFound) {
			return q, nil, false, err
		}
		if len(hard) == 0 {
			return nil, nil, false, nil
		}
	}
	ann := map[string]string{annManaged: "true"}
	if mode != modeNormal {
		ann[annStatus] = string(mode)
	}
	err = b.kube.createQuota(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: quotaName, Namespace: ns, Annotations: ann},
		Spec: corev1.ResourceQuotaSpec{Hard: hard}})
	switch {
	case err == nil:
		b.logger(ctx).Info("resource quota created", zap.String("namespace", ns), zap.String("status", string(mode)))
		return nil, hard, true, nil
	case !errors.Is(err, errExists):
		return nil, nil, false, err
	}
	q, err := b.kube.quota(ctx, ns)
	return q, nil, false, err
}

// temporary reports whether a quota holds temporary amounts (paused or downscaled): Waldur's
// limits, not the quota's, are then the resource's limits.
func temporary(q *corev1.ResourceQuota) bool {
	return q != nil && q.Annotations[annStatus] != ""
}
