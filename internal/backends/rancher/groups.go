package rancher

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/clients/keycloak"
	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
	"github.com/waldur/site-agent/internal/failure"
)

type keycloakUser = keycloak.User

// memberSnap is a child group's member list as last read (or changed) by this process. It
// serves every resource bound to the group for as long as a cluster listing serves a pass
// (invTTL), so a membership pass reads each group once however many resources share it.
type memberSnap struct {
	at    time.Time
	users []keycloakUser
}

func (s memberSnap) with(users ...keycloakUser) memberSnap {
	out := memberSnap{at: s.at, users: append([]keycloakUser(nil), s.users...)}
	for _, u := range users {
		known := false
		for _, have := range out.users {
			known = known || have.ID == u.ID
		}
		if !known {
			out.users = append(out.users, u)
		}
	}
	return out
}

func (s memberSnap) without(userID string) memberSnap {
	out := memberSnap{at: s.at}
	for _, u := range s.users {
		if u.ID != userID {
			out.users = append(out.users, u)
		}
	}
	return out
}

// groupMembers returns the members of a child group, read from Keycloak at most once per pass
// (invTTL; concurrent callers share one read). found is false when the group does not exist.
func (b *Backend) groupMembers(ctx context.Context, group string) ([]keycloakUser, bool, error) {
	if users, ok := b.snapshot(group); ok {
		return users, true, nil
	}
	type read struct {
		users []keycloakUser
		found bool
	}
	v, err, _ := b.reads.Do(group, func() (any, error) {
		if users, ok := b.snapshot(group); ok {
			return read{users, true}, nil
		}
		users, found, err := b.readMembers(ctx, group)
		if err == nil && found {
			b.kcMu.Lock()
			b.snaps[group] = memberSnap{at: time.Now(), users: users}
			b.kcMu.Unlock()
		}
		return read{users, found}, err
	})
	if err != nil {
		return nil, false, err
	}
	r := v.(read)
	return append([]keycloakUser(nil), r.users...), r.found, nil
}

// snapshot returns a fresh member list of group, if there is one.
func (b *Backend) snapshot(group string) ([]keycloakUser, bool) {
	b.kcMu.Lock()
	defer b.kcMu.Unlock()
	snap, ok := b.snaps[group]
	if !ok || time.Since(snap.at) >= b.invTTL {
		return nil, false
	}
	return append([]keycloakUser(nil), snap.users...), true
}

// memberIDs is the set of user ids in group: none for a group just created, else as read this
// pass (one read when this pass has none).
func (b *Backend) memberIDs(ctx context.Context, group string, created bool) (map[string]bool, error) {
	out := map[string]bool{}
	if created {
		return out, nil
	}
	users, ok := b.snapshot(group)
	if !ok {
		var err error
		if users, _, err = b.groupMembers(ctx, group); err != nil {
			return nil, err
		}
	}
	for _, u := range users {
		out[u.ID] = true
	}
	return out, nil
}

// readMembers reads a child group's members; a group deleted behind the id cache's back
// reports found=false.
func (b *Backend) readMembers(ctx context.Context, group string) (users []keycloakUser, found bool, err error) {
	for attempt := 0; attempt < 2; attempt++ {
		var id string
		if id, found, err = b.kc.FindChildGroup(ctx, b.cfg.parentGroup, group); err != nil || !found {
			return nil, false, err
		}
		users, err = b.kc.Members(ctx, id)
		if !isNotFound(err) {
			break
		}
		// The cached id was stale (the client dropped it): look the group up once more.
	}
	if err != nil {
		return nil, false, failIfGone(err)
	}
	return users, true, nil
}

// forgetGroup drops the member list of a child group (it was deleted or re-created).
func (b *Backend) forgetGroup(group string) {
	b.kcMu.Lock()
	delete(b.snaps, group)
	b.kcMu.Unlock()
}

// ensureGroupID finds or creates the child group and its parent and returns the child's id
// (no request when this process knows it; one to create a new child). A group this call created
// is known to have no members.
func (b *Backend) ensureGroupID(ctx context.Context, res backends.Resource, group string) (id string, created bool, err error) {
	id, created, err = b.kc.EnsureChildGroup(ctx, b.cfg.parentGroup, parentGroupDescription(b.cfg.clusterID),
		group, childGroupDescription(res.ProjectSlug, b.cfg.role))
	if created {
		b.kcMu.Lock()
		b.snaps[group] = memberSnap{at: time.Now()}
		b.kcMu.Unlock()
	}
	return id, created, err
}

// ensureGroup makes sure the child group exists (re-creating it and its parent when deleted);
// it reads the group's members on the way, for the Members call that follows in the pass.
func (b *Backend) ensureGroup(ctx context.Context, res backends.Resource, group string) (repaired bool, err error) {
	_, found, err := b.groupMembers(ctx, group)
	if err != nil || found {
		return false, err
	}
	b.logger(ctx).Info("keycloak group missing; creating it", zap.String("group", group))
	if _, _, err := b.ensureGroupID(ctx, res, group); err != nil {
		return false, err
	}
	b.kcMu.Lock()
	b.snaps[group] = memberSnap{at: time.Now()} // re-created: empty, whoever made it
	b.kcMu.Unlock()
	return true, nil
}

// ensureBinding makes sure project projectID binds the child group to default_role. known holds
// the project's bindings when already listed; lookup false skips the confirming lookup (a
// project created a moment ago has no bindings).
func (b *Backend) ensureBinding(ctx context.Context, projectID, group string, known []Binding, lookup bool) (bool, error) {
	want := principal(group)
	has := func(list []Binding) bool {
		for _, bd := range list {
			if bd.ProjectID == projectID && bd.RoleTemplateID == b.cfg.role && bd.GroupPrincipalID == want {
				return true
			}
		}
		return false
	}
	if has(known) {
		return false, nil
	}
	for attempt := 0; ; attempt++ {
		if lookup || attempt > 0 {
			list, err := b.v3.Bindings(ctx, rancherapi.BindingFilter{RoleTemplateID: b.cfg.role, ProjectID: projectID, GroupPrincipalID: want})
			if err != nil || has(list) {
				return false, err
			}
		}
		_, err := b.v3.CreateBinding(ctx, projectID, b.cfg.role, want)
		if err == nil {
			b.logger(ctx).Info("project role binding created", zap.String("project", projectID), zap.String("principal", want), zap.String("role", b.cfg.role))
			return true, nil
		}
		if !failure.IsTransient(err) || attempt >= 2 {
			return false, err
		}
	}
}

// pruneBindings removes the keycloakoidc_group:// bindings of a managed project that the agent
// did not make (another group, or its group with another role), as mastermind's
// sync_rancher_group_bindings does; remove_stale_bindings: false turns it off. Each removal is
// logged.
func (b *Backend) pruneBindings(ctx context.Context, projectID, group string, list []Binding) (bool, error) {
	if !b.cfg.pruneBindings {
		return false, nil
	}
	changed := false
	for _, bd := range list {
		if bd.ProjectID != projectID || !strings.HasPrefix(bd.GroupPrincipalID, principalScheme) ||
			(bd.GroupPrincipalID == principal(group) && bd.RoleTemplateID == b.cfg.role) {
			continue
		}
		if err := b.v3.DeleteBinding(ctx, bd.ID); err != nil && !errors.Is(err, failure.ErrNotFound) {
			return changed, err
		}
		changed = true
		b.logger(ctx).Info("stale keycloak group binding removed", zap.String("project", projectID), zap.String("binding", bd.ID),
			zap.String("principal", bd.GroupPrincipalID), zap.String("role", bd.RoleTemplateID), zap.String("kept_group", group))
	}
	return changed, nil
}

// deleteBindings removes the keycloakoidc_group:// bindings of a project being deleted.
func (b *Backend) deleteBindings(ctx context.Context, projectID string) error {
	list, err := b.v3.Bindings(ctx, rancherapi.BindingFilter{ProjectID: projectID})
	if err != nil {
		return err
	}
	for _, bd := range list {
		if !strings.HasPrefix(bd.GroupPrincipalID, principalScheme) {
			continue
		}
		if err := b.v3.DeleteBinding(ctx, bd.ID); err != nil && !errors.Is(err, failure.ErrNotFound) {
			return err
		}
	}
	return nil
}

// releaseGroup deletes a child group when no other project, in any cluster, is bound to its
// principal any more (it is shared by all resources of one Waldur project). Missing groups are
// not errors.
func (b *Backend) releaseGroup(ctx context.Context, group, projectID string) error {
	others, err := b.v3.Bindings(ctx, rancherapi.BindingFilter{GroupPrincipalID: principal(group)})
	if err != nil {
		return err
	}
	for _, bd := range others {
		if bd.ProjectID != projectID {
			b.logger(ctx).Info("keycloak group still used by another project; kept", zap.String("group", group), zap.String("project", bd.ProjectID))
			return nil
		}
	}
	id, found, err := b.kc.FindChildGroup(ctx, b.cfg.parentGroup, group)
	if err != nil {
		return err
	}
	if found {
		if err := b.kc.DeleteGroup(ctx, id); err != nil && !isNotFound(err) {
			return err
		}
		b.logger(ctx).Info("keycloak group deleted", zap.String("group", group))
	}
	b.forgetGroup(group)
	b.kcMu.Lock()
	delete(b.missing, group)
	b.kcMu.Unlock()
	return nil
}

// releaseParent deletes the parent group when it has no children left.
func (b *Backend) releaseParent(ctx context.Context) error {
	gone, err := b.kc.DeleteParentIfEmpty(ctx, b.cfg.parentGroup)
	if gone {
		b.logger(ctx).Info("empty keycloak parent group deleted", zap.String("group", b.cfg.parentGroup))
	}
	return err
}

func isNotFound(err error) bool {
	return err != nil && errors.Is(err, failure.ErrNotFound)
}
