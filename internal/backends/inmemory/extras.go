package inmemory

import (
	"context"
	"fmt"

	"github.com/waldur/site-agent/internal/backends"
)

// Usage implements backends.UsageReporter: each resource reports the configured usage (or
// usage_fraction of its limits) for the current period; past periods have no data.
func (b *Backend) Usage(ctx context.Context, resources []backends.Resource, _ backends.Period, current bool) (map[string]backends.Usage, error) {
	out := map[string]backends.Usage{}
	if !current && !b.settings.PastPeriods {
		return out, nil
	}
	err := b.read(func(st *state) error {
		if err := b.fault("usage"); err != nil {
			return err
		}
		for _, r := range resources {
			obj, ok := st.Objects[r.BackendID]
			if !ok {
				continue
			}
			out[obj.ID] = b.usageOf(obj)
		}
		return nil
	})
	return out, err
}

func (b *Backend) usageOf(obj *Object) backends.Usage {
	total := backends.Quantities{}
	for _, c := range b.comps {
		if v, ok := b.settings.Usage[c.Name]; ok {
			total[c.Name] = v
		} else if lim, ok := obj.Limits[c.Name]; ok && b.settings.UsageFraction > 0 {
			total[c.Name] = lim * b.settings.UsageFraction
		}
	}
	u := backends.Usage{Total: total}
	if b.settings.PerUserUsage && len(obj.Members) > 0 {
		u.Users = map[string]backends.Quantities{}
		n := float64(len(obj.Members))
		for _, m := range obj.Members {
			share := backends.Quantities{}
			for k, v := range total {
				share[k] = v / n
			}
			u.Users[m] = share
		}
	}
	return u
}

// Limits implements backends.LimitsReader.
func (b *Backend) Limits(ctx context.Context, res backends.Resource) (backends.Quantities, error) {
	info, err := b.Lookup(ctx, res)
	return info.Limits, err
}

// Pause implements backends.StatusController.
func (b *Backend) Pause(ctx context.Context, res backends.Resource) error {
	return b.setStatus(ctx, res, true, false)
}

// Downscale implements backends.StatusController.
func (b *Backend) Downscale(ctx context.Context, res backends.Resource) error {
	return b.setStatus(ctx, res, false, true)
}

// Restore implements backends.StatusController.
func (b *Backend) Restore(ctx context.Context, res backends.Resource) error {
	return b.setStatus(ctx, res, false, false)
}

func (b *Backend) setStatus(ctx context.Context, res backends.Resource, paused, downscaled bool) error {
	var changed bool
	if err := b.read(func(st *state) error {
		obj, err := find(st, res)
		if err == nil {
			changed = obj.Paused != paused || obj.Downscaled != downscaled
		}
		return err
	}); err != nil || !changed {
		return err
	}
	return b.do(ctx, "set_status", func(st *state) error {
		obj, err := find(st, res)
		if err != nil {
			return err
		}
		obj.Paused, obj.Downscaled = paused, downscaled
		st.log("set_status", obj.ID, fmt.Sprintf("paused=%v downscaled=%v", paused, downscaled))
		return nil
	})
}

// Metadata implements backends.MetadataReader.
func (b *Backend) Metadata(ctx context.Context, res backends.Resource) (map[string]any, error) {
	var md map[string]any
	err := b.read(func(st *state) error {
		obj, err := find(st, res)
		if err != nil {
			return err
		}
		md = map[string]any{"backend": "inmemory", "members": len(obj.Members), "paused": obj.Paused, "downscaled": obj.Downscaled}
		return nil
	})
	return md, err
}

// Evaluate implements backends.OrderEvaluator: orders above max_limits are rejected.
func (b *Backend) Evaluate(_ context.Context, review backends.OrderReview) (backends.Decision, string, error) {
	for _, k := range review.Resource.Limits.Keys() {
		if max, ok := b.settings.MaxLimits[k]; ok && review.Resource.Limits[k] > max {
			return backends.Reject, fmt.Sprintf("requested %s %g exceeds the site maximum %g", k, review.Resource.Limits[k], max), nil
		}
	}
	return backends.Accept, "", nil
}

// Ping implements backends.Pinger.
func (b *Backend) Ping(context.Context) error {
	return b.read(func(*state) error { return nil })
}

// Probes implements backends.Diagnoser: the state (file) the backend keeps.
func (b *Backend) Probes() []backends.Probe {
	return []backends.Probe{{Upstream: "inmemory", Run: b.diagnose}}
}

func (b *Backend) diagnose(context.Context) []backends.Check {
	objs, err := b.Objects()
	if err != nil {
		return []backends.Check{{Name: "in-memory state", OK: false, Detail: err.Error()}}
	}
	where := "memory only"
	if b.settings.StateFile != "" {
		where = "state file " + b.settings.StateFile
	}
	return []backends.Check{{Name: "in-memory state", OK: true, Detail: fmt.Sprintf("%d resources, %s", len(objs), where)}}
}
