package modes

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/usage"
	wc "github.com/waldur/site-agent/internal/waldurclient"
)

// execute does the backend work of an executing order. Every step is safe to repeat: a crash
// or a transient failure anywhere leaves a state that the next cycle completes.
func (m *Orders) execute(ctx context.Context, u *Unit, log *zap.Logger, teams *teamCache, o wc.Order) error {
	prov := u.Backend.Provisioner
	if prov == nil {
		return failure.Errorf("backend %q cannot provision resources", u.Backend.Name)
	}
	wr, err := u.Waldur.GetResource(ctx, o.ResourceUUID)
	if err != nil {
		return fmt.Errorf("fetch resource: %w", err)
	}
	res := withOrder(toBackend(wr, u.Components()), o, u.Components())
	switch o.Type {
	case wc.OrderCreate, wc.OrderRestore:
		return m.create(ctx, u, log, teams, prov, wr, res)
	case wc.OrderUpdate:
		return m.update(ctx, u, prov, o, res)
	case wc.OrderTerminate:
		if res.BackendID == "" {
			log.Info("resource was never created on the backend; nothing to delete")
			return nil
		}
		return prov.Delete(ctx, res)
	}
	return failure.Errorf("order type %q is not supported", o.Type)
}

func (m *Orders) create(ctx context.Context, u *Unit, log *zap.Logger, teams *teamCache, prov backends.Provisioner, wr wc.Resource, res backends.Resource) error {
	members, err := teamMembers(ctx, u, teams, wr)
	if err != nil {
		return err
	}
	if res.BackendID != "" {
		log.Info("resource has a backend id; completing or re-creating its backend object", zap.String("backend_id", res.BackendID))
	}
	// Waldur's uniqueness check is for allocating a new id; a resource that has one keeps it.
	info, err := m.createWithFreeName(ctx, u, prov, backends.CreateRequest{Resource: res, Members: members}, res.BackendID == "")
	if info.BackendID != "" && info.BackendID != res.BackendID {
		// Recorded even when Create failed half-way: Terminate can then clean up what was made,
		// and the next attempt adopts it.
		if serr := u.Waldur.SetResourceBackendID(ctx, wr.UUID, info.BackendID); serr != nil {
			if err == nil {
				return fmt.Errorf("record backend id: %w", serr)
			}
			log.Warn("could not record the backend id of a partly created resource", zap.Error(serr))
		}
	}
	if err != nil {
		return err
	}
	log.Info("resource ready", zap.String("backend_id", info.BackendID))
	if info.Limits != nil {
		enforced := usage.LimitsToWaldur(info.Limits, u.Components())
		if !usage.SameQuantities(enforced, backends.Quantities(wr.Limits)) {
			if err := u.Waldur.SetResourceLimits(ctx, wr.UUID, enforced); err != nil {
				return fmt.Errorf("record limits: %w", err)
			}
		}
	}
	if len(info.Metadata) > 0 && !sameJSON(info.Metadata, wr.BackendMetadata) {
		if err := u.Waldur.SetResourceMetadata(ctx, wr.UUID, info.Metadata); err != nil {
			log.Warn("could not record backend metadata; membership sync will retry", zap.Error(err))
		}
	}
	return nil
}

// createWithFreeName tries name candidates until the backend accepts one. With
// check_backend_id_uniqueness, Waldur is asked first whether another resource holds the name.
func (m *Orders) createWithFreeName(ctx context.Context, u *Unit, prov backends.Provisioner, req backends.CreateRequest, askWaldur bool) (backends.Info, error) {
	off := u.Offering
	attempts := 1
	if off.CheckBackendIDUniqueness && askWaldur {
		attempts = off.BackendIDMaxRetries
	}
	const duplicateAttempts = 10 // backend-side name clashes are resolved even without the check
	candidates := nameCandidates(off.AllocationPrefix, req.Resource.Slug, req.Resource.UUID, max(attempts, duplicateAttempts))
	for i, name := range candidates {
		if off.CheckBackendIDUniqueness && askWaldur && i < attempts {
			unique, err := u.Waldur.CheckUniqueBackendID(ctx, off.UUID, name, off.CheckAllOfferings)
			if err != nil {
				return backends.Info{}, fmt.Errorf("check backend id uniqueness: %w", err)
			}
			if !unique {
				continue
			}
		}
		req.Name = name
		info, err := prov.Create(ctx, req)
		if errors.Is(err, failure.ErrDuplicate) {
			continue
		}
		if err == nil && info.BackendID == "" {
			return info, failure.Errorf("backend returned an empty id for %q", name)
		}
		return info, err
	}
	return backends.Info{}, failure.Errorf("unable to create resource: no free backend id after %d attempts (last tried %q)",
		len(candidates), candidates[len(candidates)-1])
}

// teamMembers returns the users who should get access to a new resource right away (the
// project's team, fetched once per project per cycle).
func teamMembers(ctx context.Context, u *Unit, teams *teamCache, wr wc.Resource) ([]backends.Member, error) {
	if u.Backend.Members == nil {
		return nil, nil
	}
	team, err := teams.get(ctx, wr)
	if err != nil {
		return nil, err
	}
	return desiredMembers(team, wr.RestrictMemberAccess), nil
}

func (m *Orders) update(ctx context.Context, u *Unit, prov backends.Provisioner, o wc.Order, res backends.Resource) error {
	if res.BackendID == "" {
		return failure.Errorf("resource has no backend id: it was never created on the backend")
	}
	limits := res.Limits
	_, newOptions := o.Attributes["new_options"].(map[string]any)
	if len(o.Limits) == 0 && !newOptions {
		if o.PlanUUID == "" {
			u.Log.Warn("update order carries no limits; nothing to change", zap.String("order", o.UUID))
			return nil
		}
		plan, err := u.Waldur.GetPlan(ctx, o.PlanUUID)
		if err != nil {
			return fmt.Errorf("fetch plan: %w", err)
		}
		if len(plan.Quotas) == 0 {
			return nil
		}
		limits = usage.LimitsToBackend(backends.Quantities(plan.Quotas), u.Components())
	}
	return prov.SetLimits(ctx, res, limits)
}
