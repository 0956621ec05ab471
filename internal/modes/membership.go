package modes

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/usage"
	wc "github.com/waldur/site-agent/internal/waldurclient"
)

// Membership is the membership_sync mode: team → backend access (or, for a backend that syncs
// resource projects, their grants → the backend and its outcomes back, projects.go), paused/downscaled
// flags, enforced limits and backend metadata back to Waldur, and repair of drifted backend objects.
type Membership struct {
	Env *Env
	// SyncStamp is the age of Waldur's last_sync after which refresh_last_sync is sent (default
	// 1 h; the incumbent sent it on every pass, one request per resource every five minutes).
	SyncStamp time.Duration
}

// Name implements Mode.
func (*Membership) Name() string { return ModeMembershipSync }

// RunOnce syncs every OK or Erred resource of the offering that has a backend id.
func (m *Membership) RunOnce(ctx context.Context, u *Unit) error {
	pp, access, err := m.prepare(ctx, u, backendReady)
	if err != nil {
		return err
	}
	resources, err := u.Waldur.ListResources(ctx, u.Offering.UUID, wc.ResourceOK, wc.ResourceErred)
	if err != nil {
		return fmt.Errorf("list resources: %w", err)
	}
	return m.syncAll(ctx, u, resources, access, pp)
}

// prepare starts a membership pass: the resource-project check (projectPass) and whether the
// backend's access service answers (ready: backendReady, or backendReadyCached for events).
func (m *Membership) prepare(ctx context.Context, u *Unit,
	ready func(context.Context, *Env, *Unit, string) (bool, error)) (*projectPass, bool, error) {
	pp, err := m.projectPass(ctx, u)
	if err != nil {
		return nil, false, err
	}
	access, err := ready(ctx, m.Env, u, "resources left untouched")
	return pp, access, err
}

// projectPass checks, for a backend that syncs resource projects, that Waldur serves them, and
// reads whether the offering wants membership sync statuses (nil for other backends).
func (m *Membership) projectPass(ctx context.Context, u *Unit) (*projectPass, error) {
	if u.Backend.Projects == nil {
		return nil, nil
	}
	version, err := requireResourceProjects(ctx, u)
	if err != nil {
		return nil, err
	}
	return &projectPass{syncer: u.Backend.Projects, statuses: statusReporting(ctx, u, version)}, nil
}

// SyncResources syncs the given resources now, exactly as a membership pass syncs each one
// (event mode: a role, account, resource or offering-user change). Resources that are not OK
// or Erred, or have no backend id, are left alone.
func (m *Membership) SyncResources(ctx context.Context, u *Unit, resources []wc.Resource) error {
	var keep []wc.Resource
	for _, r := range resources {
		if r.State == wc.ResourceOK || r.State == wc.ResourceErred {
			keep = append(keep, r)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	pp, access, err := m.prepare(ctx, u, backendReadyCached)
	if err != nil {
		return err
	}
	return m.syncAll(ctx, u, keep, access, pp)
}

// syncAll syncs resources with bounded concurrency; one resource is never synced twice at
// once. Without access (the backend's access service does not answer) members are left as
// they are.
func (m *Membership) syncAll(ctx context.Context, u *Unit, resources []wc.Resource, access bool, pp *projectPass) error {
	teams := newTeamCache(u.Waldur)
	members := u.Backend.Members
	if !access {
		members, pp = nil, nil // membership changes wait until the backend's access service answers
	}
	var accs accounts
	if members != nil && hasBackendIDs(resources) {
		accs = fetchAccounts(ctx, u)
	}
	var failed sync.Map
	forEach(ctx, m.Env.Concurrency, resources, func(r wc.Resource) {
		ctx := backends.ForResource(ctx, r.UUID) // the backend's log lines name the resource
		if r.Malformed != "" {
			u.Log.Error("resource could not be read; skipped", zap.String("resource", r.UUID), zap.String("error", r.Malformed))
			failed.Store(r.UUID, r.Malformed)
			return
		}
		if r.BackendID == "" {
			return
		}
		unlock, _, err := u.locks.lock(ctx, "members:"+hex(r.UUID))
		if err != nil {
			return
		}
		defer unlock()
		if err := m.syncResource(ctx, u, members, pp, teams, accs, r); err != nil {
			failed.Store(r.UUID, err)
			m.fail(ctx, u, r, err)
		}
	})
	n := 0
	failed.Range(func(any, any) bool { n++; return true })
	if n > 0 {
		return fmt.Errorf("%d of %d resources failed to sync", n, len(resources))
	}
	return nil
}

func (m *Membership) syncResource(ctx context.Context, u *Unit, members backends.MembershipManager, pp *projectPass,
	teams *teamCache, accs accounts, r wc.Resource) error {
	res := toBackend(r, u.Components())
	log := u.Log.With(zap.String("resource", r.UUID), zap.String("backend_id", r.BackendID))
	if rec := u.Backend.Reconciler; rec != nil {
		if err := rec.Reconcile(ctx, res); err != nil {
			if !failure.IsTransient(err) {
				// The backend's metadata says what is wrong (which nodes are down): it reaches
				// Waldur with the erred state, not only once the resource is well again.
				m.pushMetadata(ctx, u, log, r, res)
			}
			return fmt.Errorf("reconcile: %w", err)
		}
	}
	if mm := members; mm != nil {
		team, err := teams.get(ctx, r)
		if err != nil {
			return err
		}
		desired, keep := accs.apply(r.ProjectUUID, desiredMembers(team, r.RestrictMemberAccess), r.RestrictMemberAccess)
		if !accs.complete {
			keep = nil // removals are unsafe when the account lists are unknown
		}
		if err := m.syncMembers(ctx, u, log, mm, res, desired, keep, accs.complete); err != nil {
			return err
		}
	}
	if pp != nil {
		if err := m.syncProjects(ctx, u, log, pp, r, res); err != nil {
			return err
		}
	}
	if sc := u.Backend.Status; sc != nil {
		if err := applyStatus(ctx, sc, r, res); err != nil {
			return fmt.Errorf("apply paused/downscaled state: %w", err)
		}
	}
	if err := m.pushBackendFacts(ctx, u, r, res); err != nil {
		return err
	}
	if r.State == wc.ResourceErred {
		if err := u.Waldur.SetResourceOK(ctx, r.UUID); err != nil {
			return fmt.Errorf("set resource ok: %w", err)
		}
		log.Info("resource recovered from erred")
	}
	return m.stamp(ctx, u, r)
}

func (m *Membership) syncMembers(ctx context.Context, u *Unit, log *zap.Logger, mm backends.MembershipManager,
	res backends.Resource, desired []backends.Member, keep map[string]bool, mayRemove bool) error {
	current, err := mm.Members(ctx, res)
	if err != nil {
		return fmt.Errorf("list backend members: %w", err)
	}
	add, remove := memberDiff(desired, current)
	remove = keepOut(remove, keep, mayRemove)
	if len(add) > 0 {
		if err := mm.AddMembers(ctx, res, add); err != nil {
			return fmt.Errorf("add members: %w", err)
		}
		m.Env.Metrics.MemberChanges.WithLabelValues(u.metricID(), "add").Add(float64(len(add)))
		log.Info("members added", zap.Int("count", len(add)), zap.Strings("usernames", usernames(add)))
	}
	if len(remove) > 0 {
		if err := mm.RemoveMembers(ctx, res, remove); err != nil {
			return fmt.Errorf("remove members: %w", err)
		}
		m.Env.Metrics.MemberChanges.WithLabelValues(u.metricID(), "remove").Add(float64(len(remove)))
		log.Info("members removed", zap.Int("count", len(remove)), zap.Strings("usernames", remove))
	}
	return nil
}

func applyStatus(ctx context.Context, sc backends.StatusController, r wc.Resource, res backends.Resource) error {
	switch {
	case r.Paused:
		return sc.Pause(ctx, res)
	case r.Downscaled:
		return sc.Downscale(ctx, res)
	default:
		return sc.Restore(ctx, res)
	}
}

// pushBackendFacts sends enforced limits and metadata to Waldur when they differ from what it
// holds (the backend is the source of truth for both).
func (m *Membership) pushBackendFacts(ctx context.Context, u *Unit, r wc.Resource, res backends.Resource) error {
	if lr := u.Backend.Limits; lr != nil {
		limits, err := lr.Limits(ctx, res)
		if err != nil {
			return fmt.Errorf("read backend limits: %w", err)
		}
		enforced := usage.LimitsToWaldur(limits, u.Components())
		if len(enforced) > 0 && !usage.SameQuantities(enforced, backends.Quantities(r.Limits)) {
			if err := u.Waldur.SetResourceLimits(ctx, r.UUID, enforced); err != nil {
				return fmt.Errorf("set limits: %w", err)
			}
		}
	}
	if mr := u.Backend.Metadata; mr != nil {
		md, err := mr.Metadata(ctx, res)
		if err != nil {
			return fmt.Errorf("read backend metadata: %w", err)
		}
		if md != nil && !sameJSON(md, r.BackendMetadata) {
			if err := u.Waldur.SetResourceMetadata(ctx, r.UUID, md); err != nil {
				return fmt.Errorf("set backend metadata: %w", err)
			}
		}
	}
	return nil
}

// pushMetadata sends the backend's metadata when it differs from Waldur's, logging a failure
// (the resource is being marked erred for another reason).
func (m *Membership) pushMetadata(ctx context.Context, u *Unit, log *zap.Logger, r wc.Resource, res backends.Resource) {
	mr := u.Backend.Metadata
	if mr == nil {
		return
	}
	md, err := mr.Metadata(ctx, res)
	if err == nil && md != nil && !sameJSON(md, r.BackendMetadata) {
		err = u.Waldur.SetResourceMetadata(ctx, r.UUID, md)
	}
	if err != nil {
		log.Warn("could not send backend metadata", zap.Error(err))
	}
}

// stamp sends refresh_last_sync when Waldur's last_sync of the resource is older than SyncStamp.
func (m *Membership) stamp(ctx context.Context, u *Unit, r wc.Resource) error {
	every := m.SyncStamp
	if every == 0 {
		every = time.Hour
	}
	if r.LastSync != nil && m.Env.now().Sub(*r.LastSync) < every {
		return nil
	}
	if err := u.Waldur.RefreshLastSync(ctx, r.UUID); err != nil {
		return fmt.Errorf("refresh last sync: %w", err)
	}
	return nil
}

// fail records a per-resource failure: transient ones are only logged (the next pass retries),
// permanent ones mark the Waldur resource erred with a readable reason.
func (m *Membership) fail(ctx context.Context, u *Unit, r wc.Resource, err error) {
	log := u.Log.With(zap.String("resource", r.UUID), zap.String("backend_id", r.BackendID))
	if failure.IsTransient(err) || ctx.Err() != nil {
		m.Env.Metrics.ResourceErrors.WithLabelValues(u.metricID(), "transient").Inc()
		m.Env.Status.Error(u.Offering.UUID, ModeMembershipSync, fmt.Sprintf("resource %s (temporary, retried next pass): %v", r.UUID, err))
		log.Warn("resource sync hit a temporary failure; retrying next pass", zap.Error(err))
		return
	}
	m.Env.Metrics.ResourceErrors.WithLabelValues(u.metricID(), "permanent").Inc()
	m.Env.Status.Error(u.Offering.UUID, ModeMembershipSync, fmt.Sprintf("resource %s (marked erred): %v", r.UUID, err))
	log.Error("resource sync failed", zap.Error(err))
	if serr := u.Waldur.SetResourceErred(ctx, r.UUID, m.Env.publicError(err), ""); serr != nil {
		log.Warn("could not mark resource erred", zap.Error(serr))
	}
}

// keepOut drops usernames that must stay (or all, when removals are unsafe this pass).
func keepOut(remove []string, keep map[string]bool, mayRemove bool) []string {
	if !mayRemove {
		return nil
	}
	out := remove[:0]
	for _, u := range remove {
		if !keep[u] {
			out = append(out, u)
		}
	}
	return out
}

func hasBackendIDs(rs []wc.Resource) bool {
	for _, r := range rs {
		if r.BackendID != "" {
			return true
		}
	}
	return false
}

func usernames(ms []backends.Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Username
	}
	return out
}
