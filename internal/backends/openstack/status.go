package openstack

import (
	"context"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
)

// Pause implements backends.StatusController: every mapped quota drops to zero, so nothing new
// can be created while what exists keeps running (Nova is forced below usage; Cinder, which
// refuses that, is held at current usage). The project is tagged paused, which makes the next
// passes cheap and tells SetLimits to keep the zero quotas.
func (b *Backend) Pause(ctx context.Context, res backends.Resource) error {
	return b.setStatus(ctx, res, statusPaused)
}

// Downscale implements backends.StatusController: every finite limit is multiplied by
// downscale_factor (default 0.5) and rounded down, with the same rules for usage as Pause.
func (b *Backend) Downscale(ctx context.Context, res backends.Resource) error {
	return b.setStatus(ctx, res, statusDown)
}

// Restore implements backends.StatusController: the resource's limits come back. For a tenant
// that is neither paused nor downscaled it costs one Keystone read.
func (b *Backend) Restore(ctx context.Context, res backends.Resource) error {
	return b.setStatus(ctx, res, "")
}

func (b *Backend) setStatus(ctx context.Context, res backends.Resource, status string) error {
	c, p, err := b.ownedTenant(ctx, res)
	if err != nil {
		return err
	}
	current, _ := tagValue(p.Tags, statusTagPrefix)
	if current == status {
		return nil
	}
	want, err := b.quotas.toQuotas(res.Limits)
	if err != nil {
		return err
	}
	switch status {
	case statusPaused:
		want = b.quotas.zeroQuotas()
	case statusDown:
		want = scaled(want, *b.settings.DownscaleFactor)
	}
	// Quotas first, then the tag: a pass interrupted in between sees the old tag and repeats.
	if err := b.overrideQuotas(ctx, c, p.ID, want); err != nil {
		return err
	}
	if err := c.setTags(ctx, p, withStatus(p.Tags, status)); err != nil {
		return err
	}
	b.logger(ctx).Info("tenant status changed", zap.String("project_id", p.ID), zap.String("from", orNone(current)), zap.String("to", orNone(status)))
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "active"
	}
	return s
}

// UsageIsGauge implements backends.GaugeUsage: quota usage is what the tenant holds now (it
// falls when servers or volumes are deleted).
func (b *Backend) UsageIsGauge() bool { return true }
