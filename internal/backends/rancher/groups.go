package rancher

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/clients/keycloak"
	"github.com/waldur/site-agent/internal/failure"
)

type keycloakUser = keycloak.User

// memberSnap is a child group's member list as read by Reconcile, reused by the Members call
// that follows it in the same pass.
type memberSnap struct {
	at    time.Time
	users []keycloakUser
}

const snapTTL = 15 * time.Second

func (b *Backend) childGroup(res backends.Resource) string {
	return childGroupName(res.ProjectSlug, b.cfg.role)
}

// groupID returns the Keycloak id of the resource's child group (the keycloak client caches
// ids, so a warm lookup sends no request). With create it finds or creates the parent and
// child groups; without, found says whether the group exists.
func (b *Backend) groupID(ctx context.Context, res backends.Resource, create bool) (id string, found bool, err error) {
	child := b.childGroup(res)
	id, found, err = b.kc.FindChildGroup(ctx, b.cfg.parentGroup, child)
	if err != nil || found || !create {
		return id, found, err
	}
	id, err = b.kc.EnsureGroup(ctx, b.cfg.parentGroup, parentGroupDescription(b.cfg.clusterID),
		child, childGroupDescription(res.ProjectSlug, b.cfg.role))
	return id, err == nil, err
}

// forgetGroup drops the member snapshot of a child group (it changed or was deleted).
func (b *Backend) forgetGroup(child string) {
	b.kcMu.Lock()
	delete(b.snaps, child)
	b.kcMu.Unlock()
}

// readMembers reads a child group's members; a group deleted behind the cache's back reports
// found=false.
func (b *Backend) readMembers(ctx context.Context, res backends.Resource) (users []keycloakUser, found bool, err error) {
	child := b.childGroup(res)
	id, found, err := b.groupID(ctx, res, false)
	if err != nil || !found {
		return nil, false, err
	}
	users, err = b.kc.Members(ctx, id)
	if isNotFound(err) {
		b.forgetGroup(child)
		// The cached id was stale (the client dropped it): look the group up once more.
		if id, found, err = b.groupID(ctx, res, false); err != nil || !found {
			return nil, false, err
		}
		users, err = b.kc.Members(ctx, id)
	}
	if err != nil {
		return nil, false, err
	}
	b.kcMu.Lock()
	b.snaps[child] = memberSnap{at: time.Now(), users: users}
	b.kcMu.Unlock()
	return users, true, nil
}

// ensureGroup makes sure the child group exists (re-creating it and its parent when deleted)
// and reads its members.
func (b *Backend) ensureGroup(ctx context.Context, res backends.Resource) (repaired bool, err error) {
	_, found, err := b.readMembers(ctx, res)
	if err != nil || found {
		return false, err
	}
	b.log.Info("keycloak group missing; creating it", zap.String("group", b.childGroup(res)))
	if _, _, err := b.groupID(ctx, res, true); err != nil {
		return false, err
	}
	_, _, err = b.readMembers(ctx, res)
	return true, err
}

// ensureBinding makes sure project projectID binds the child group to default_role. known
// holds the project's bindings when already listed (nil = look them up).
func (b *Backend) ensureBinding(ctx context.Context, projectID, child string, known []Binding) (bool, error) {
	want := principal(child)
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
		list, err := b.v3.Bindings(ctx, map[string]any{"roleTemplateId": b.cfg.role, "projectId": projectID, "groupPrincipalId": want})
		if err != nil || has(list) {
			return false, err
		}
		_, err = b.v3.CreateBinding(ctx, bindingInput{ProjectID: projectID, RoleTemplateID: b.cfg.role, GroupPrincipalID: want})
		if err == nil {
			b.log.Info("project role binding created", zap.String("project", projectID), zap.String("principal", want), zap.String("role", b.cfg.role))
			return true, nil
		}
		if !failure.IsTransient(err) || attempt >= 2 {
			return false, err
		}
	}
}

// deleteBindings removes project projectID's bindings of the child group.
func (b *Backend) deleteBindings(ctx context.Context, projectID, child string) error {
	list, err := b.v3.Bindings(ctx, map[string]any{"projectId": projectID, "groupPrincipalId": principal(child)})
	if err != nil {
		return err
	}
	for _, bd := range list {
		if err := b.v3.DeleteBinding(ctx, bd); err != nil && !errors.Is(err, failure.ErrNotFound) {
			return err
		}
	}
	return nil
}

// releaseGroup deletes the child group of res when no other project of the cluster is bound
// to it any more (it is shared by all resources of one Waldur project), then the parent group
// when it has no children left. Missing groups are not errors.
func (b *Backend) releaseGroup(ctx context.Context, res backends.Resource, projectID string) error {
	child := b.childGroup(res)
	others, err := b.v3.Bindings(ctx, map[string]any{"groupPrincipalId": principal(child)})
	if err != nil {
		return err
	}
	for _, bd := range others {
		if bd.ProjectID != projectID && strings.HasPrefix(bd.ProjectID, b.cfg.clusterID+":") {
			b.log.Info("keycloak group still used by another project; kept", zap.String("group", child), zap.String("project", bd.ProjectID))
			return nil
		}
	}
	id, found, err := b.kc.FindChildGroup(ctx, b.cfg.parentGroup, child)
	if err != nil {
		return err
	}
	if found {
		if err := b.kc.DeleteGroup(ctx, id); err != nil && !isNotFound(err) {
			return err
		}
		b.log.Info("keycloak group deleted", zap.String("group", child))
	}
	b.forgetGroup(child)
	b.kcMu.Lock()
	delete(b.missing, child)
	b.kcMu.Unlock()
	if gone, err := b.kc.DeleteParentIfEmpty(ctx, b.cfg.parentGroup); err != nil {
		return err
	} else if gone {
		b.log.Info("empty keycloak parent group deleted", zap.String("group", b.cfg.parentGroup))
	}
	return nil
}

func isNotFound(err error) bool {
	return err != nil && errors.Is(err, failure.ErrNotFound)
}
