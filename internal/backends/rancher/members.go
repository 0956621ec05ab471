package rancher

import (
	"context"
	"sort"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// Members implements backends.MembershipManager: the members of the resource's Keycloak child
// group, each named the way Waldur names it — the Keycloak user id with keycloak_use_user_id,
// else the username; a user that was matched by the username fallback keeps that username.
// A missing group has no members (AddMembers re-creates it).
func (b *WithKeycloak) Members(ctx context.Context, res backends.Resource) ([]string, error) {
	child := b.childGroup(res)
	b.kcMu.Lock()
	snap, fresh := b.snaps[child]
	b.kcMu.Unlock()
	users := snap.users
	if !fresh || time.Since(snap.at) > snapTTL {
		var err error
		if users, _, err = b.readMembers(ctx, res); err != nil {
			return nil, err
		}
	}
	b.kcMu.Lock()
	defer b.kcMu.Unlock()
	out := make([]string, 0, len(users))
	for _, u := range users {
		ident := u.Username
		if b.cfg.useUserID {
			ident = u.ID
		}
		if alias := b.aliases[u.ID]; alias != "" {
			ident = alias
		}
		b.byIdent[ident] = u
		out = append(out, ident)
	}
	sort.Strings(out)
	return out, nil
}

// AddMembers implements backends.MembershipManager: each offering username is looked up in
// Keycloak (by id then username with keycloak_use_user_id, else by exact username) and added
// to the child group, which is created when missing. Users missing in Keycloak are logged and
// listed in the resource metadata; they do not fail the call.
func (b *WithKeycloak) AddMembers(ctx context.Context, res backends.Resource, members []backends.Member) error {
	return b.addMembers(ctx, res, members)
}

func (b *Backend) addMembers(ctx context.Context, res backends.Resource, members []backends.Member) error {
	if len(members) == 0 {
		return nil
	}
	child := b.childGroup(res)
	gid, _, err := b.groupID(ctx, res, true)
	if err != nil {
		return err
	}
	var missing []string
	for _, m := range members {
		found, err := b.addMember(ctx, gid, m.Username)
		if isNotFound(err) {
			b.forgetGroup(child) // deleted meanwhile: the next pass re-creates it
			return failure.Transient(err)
		}
		if err != nil {
			return err
		}
		if !found {
			b.log.Warn("user not found in keycloak; not added to the group", zap.String("username", m.Username), zap.String("group", child))
			missing = append(missing, m.Username)
		}
	}
	sort.Strings(missing)
	b.kcMu.Lock()
	b.missing[child] = missing
	delete(b.snaps, child)
	b.kcMu.Unlock()
	return nil
}

// addMember looks a user up (reusing what this process learned about the username, so a batch
// of creates for one team costs one lookup per user) and adds it to the group. found is false
// when Keycloak has no such user; a NotFound error means the group is gone.
func (b *Backend) addMember(ctx context.Context, gid, ident string) (found bool, err error) {
	b.kcMu.Lock()
	u, cached := b.byIdent[ident]
	b.kcMu.Unlock()
	for attempt := 0; attempt < 2; attempt++ {
		if !cached {
			if u, found, err = b.kc.FindUser(ctx, ident, b.cfg.useUserID); err != nil || !found {
				return false, err
			}
		}
		err = b.kc.AddMember(ctx, u.ID, gid)
		if isNotFound(err) && cached {
			cached = false // the user may have been re-created: look again once
			continue
		}
		break
	}
	if err != nil {
		return false, err
	}
	b.kcMu.Lock()
	if b.cfg.useUserID && u.ID != ident {
		b.aliases[u.ID] = ident
	}
	b.byIdent[ident] = u
	b.kcMu.Unlock()
	return true, nil
}

// RemoveMembers implements backends.MembershipManager. Users or groups that no longer exist
// are not errors. The group itself stays while a project uses it (Reconcile would only
// re-create it); it is deleted with the last resource that uses it.
func (b *WithKeycloak) RemoveMembers(ctx context.Context, res backends.Resource, idents []string) error {
	child := b.childGroup(res)
	gid, found, err := b.groupID(ctx, res, false)
	if err != nil || !found {
		return err
	}
	for _, ident := range idents {
		uid, ok, err := b.resolve(ctx, ident)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := b.kc.RemoveMember(ctx, uid, gid); err != nil && !isNotFound(err) {
			return err
		}
		b.kcMu.Lock()
		if b.aliases[uid] == ident {
			delete(b.aliases, uid)
		}
		delete(b.byIdent, ident)
		b.kcMu.Unlock()
	}
	b.kcMu.Lock()
	delete(b.snaps, child)
	b.kcMu.Unlock()
	return nil
}

// resolve finds the Keycloak user id behind an identifier Members returned. A raw user id whose
// user Waldur names by username (learned when AddMembers matched it) is not removed: the
// removal comes from a member list read before that match.
func (b *Backend) resolve(ctx context.Context, ident string) (string, bool, error) {
	b.kcMu.Lock()
	alias := b.aliases[ident]
	u, known := b.byIdent[ident]
	b.kcMu.Unlock()
	if alias != "" {
		b.log.Debug("keeping user matched by username", zap.String("user_id", ident), zap.String("username", alias))
		return "", false, nil
	}
	if known {
		return u.ID, true, nil
	}
	u, found, err := b.kc.FindUser(ctx, ident, b.cfg.useUserID)
	return u.ID, found, err
}

// missingUsers lists the offering usernames of a group's last AddMembers that Keycloak lacks.
func (b *Backend) missingUsers(res backends.Resource) []string {
	b.kcMu.Lock()
	defer b.kcMu.Unlock()
	return append([]string(nil), b.missing[b.childGroup(res)]...)
}
