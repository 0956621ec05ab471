package rancher

import (
	"context"
	"hash/fnv"
	"sort"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// Members implements backends.MembershipManager: the members of the resource's Keycloak child
// group, each named the way Waldur names it — the Keycloak user id with keycloak_use_user_id,
// else the username — unless the user was matched under another name (the username fallback,
// or a username that differs only in case: Keycloak stores usernames lower-cased and looks them
// up ignoring case), which is then kept. A group's members are read at most once per pass, however
// many resources share it. A missing group has no members (AddMembers re-creates it).
func (b *WithKeycloak) Members(ctx context.Context, res backends.Resource) ([]string, error) {
	if err := b.accessReady(); err != nil {
		return nil, err
	}
	group, err := b.groupOf(ctx, res)
	if err != nil {
		return nil, err
	}
	users, _, err := b.groupMembers(ctx, group)
	if err != nil {
		return nil, err
	}
	b.kcMu.Lock()
	defer b.kcMu.Unlock()
	out := make([]string, 0, len(users))
	for _, u := range users {
		ident := b.native(u)
		if alias := b.aliases[u.ID]; alias != "" {
			ident = alias
		}
		b.byIdent[ident] = u
		out = append(out, ident)
	}
	sort.Strings(out)
	return out, nil
}

// native is how Members names a user nobody matched under another name.
func (b *Backend) native(u keycloakUser) string {
	if b.cfg.useUserID {
		return u.ID
	}
	return u.Username
}

// AddMembers implements backends.MembershipManager: each offering username is looked up in
// Keycloak (by id then username with keycloak_use_user_id, else by exact username) and added
// to the child group, which is created when missing. Users already in the group (as last read)
// cost no request. Users missing in Keycloak are logged and listed in the resource metadata;
// they do not fail the call.
func (b *WithKeycloak) AddMembers(ctx context.Context, res backends.Resource, members []backends.Member) error {
	if err := b.accessReady(); err != nil {
		return err
	}
	group, err := b.groupOf(ctx, res)
	if err != nil {
		return err
	}
	return b.addMembers(ctx, res, group, members)
}

func (b *Backend) addMembers(ctx context.Context, res backends.Resource, group string, members []backends.Member) error {
	if len(members) == 0 {
		return nil
	}
	// Concurrent creates for one Waldur project add the same team to the same group: one at a
	// time, the later ones find the team in the member list and the users known.
	h := fnv.New32a()
	_, _ = h.Write([]byte(group))
	lock := &b.adds[h.Sum32()%uint32(len(b.adds))]
	lock.Lock()
	defer lock.Unlock()
	gid, created, err := b.ensureGroupID(ctx, res, group)
	if err != nil {
		return err
	}
	// Who is in already: nobody in a new group; else one read per pass, so a batch of creates
	// for one team sends no membership request once the team is in.
	have, err := b.memberIDs(ctx, group, created)
	if err != nil {
		return err
	}
	var missing []string
	var added []keycloakUser
	for _, m := range members {
		u, found, err := b.addMember(ctx, res, group, &gid, m.Username, have)
		if err != nil {
			return err
		}
		if !found {
			b.logger(ctx).Warn("user not found in keycloak; not added to the group", zap.String("username", m.Username), zap.String("group", group))
			missing = append(missing, m.Username)
			continue
		}
		added = append(added, u)
	}
	sort.Strings(missing)
	b.kcMu.Lock()
	b.missing[group] = missing
	if snap, ok := b.snaps[group]; ok {
		b.snaps[group] = snap.with(added...)
	}
	b.kcMu.Unlock()
	return nil
}

// addMember looks a user up (reusing what this process learned about the name, so a batch of
// creates for one team costs one lookup per user) and adds it to the group unless the last read
// showed it there. found is false when Keycloak has no such user. A 404 on the add means the
// user was re-created or the group deleted: both are looked up again, once.
func (b *Backend) addMember(ctx context.Context, res backends.Resource, group string, gid *string, ident string,
	have map[string]bool) (keycloakUser, bool, error) {
	b.kcMu.Lock()
	u, cached := b.byIdent[ident]
	b.kcMu.Unlock()
	var err error
	if !cached {
		var found bool
		if u, found, err = b.kc.FindUser(ctx, ident, b.cfg.useUserID); err != nil || !found {
			return u, false, err
		}
	}
	if !have[u.ID] {
		err = b.kc.AddMember(ctx, u.ID, *gid)
		if isNotFound(err) {
			var found bool
			if u, found, err = b.kc.FindUser(ctx, ident, b.cfg.useUserID); err != nil || !found {
				return u, false, err
			}
			b.forgetGroup(group)
			if *gid, _, err = b.ensureGroupID(ctx, res, group); err != nil {
				return u, false, err
			}
			err = b.kc.AddMember(ctx, u.ID, *gid)
		}
		if err != nil {
			return u, false, failIfGone(err)
		}
	}
	b.kcMu.Lock()
	if b.native(u) != ident {
		b.aliases[u.ID] = ident
	} else {
		delete(b.aliases, u.ID)
	}
	b.byIdent[ident] = u
	b.kcMu.Unlock()
	return u, true, nil
}

// RemoveMembers implements backends.MembershipManager. Users or groups that no longer exist
// are not errors. The group itself stays while a project uses it (Reconcile would only
// re-create it); it is deleted with the last resource that uses it.
func (b *WithKeycloak) RemoveMembers(ctx context.Context, res backends.Resource, idents []string) error {
	if err := b.accessReady(); err != nil {
		return err
	}
	group, err := b.groupOf(ctx, res)
	if err != nil {
		return err
	}
	gid, found, err := b.kc.FindChildGroup(ctx, b.cfg.parentGroup, group)
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
		delete(b.aliases, uid)
		delete(b.byIdent, ident)
		if snap, ok := b.snaps[group]; ok {
			b.snaps[group] = snap.without(uid)
		}
		b.kcMu.Unlock()
	}
	return nil
}

// resolve finds the Keycloak user id behind an identifier Members returned. A user whom
// AddMembers matched under another name (the username Waldur uses instead of the id, or the
// same username in other case) is not removed under the old one: the removal comes from a
// member list read before that match.
func (b *Backend) resolve(ctx context.Context, ident string) (string, bool, error) {
	b.kcMu.Lock()
	u, known := b.byIdent[ident]
	b.kcMu.Unlock()
	if !known {
		var found bool
		var err error
		if u, found, err = b.kc.FindUser(ctx, ident, b.cfg.useUserID); err != nil || !found {
			return "", false, err
		}
	}
	b.kcMu.Lock()
	alias := b.aliases[u.ID]
	b.kcMu.Unlock()
	if alias != "" && alias != ident {
		b.logger(ctx).Debug("keeping a user matched under another name", zap.String("member", ident), zap.String("matched_as", alias))
		return "", false, nil
	}
	return u.ID, true, nil
}

// missingUsers lists the offering usernames of a group's last AddMembers that Keycloak lacks.
func (b *Backend) missingUsers(group string) []string {
	b.kcMu.Lock()
	defer b.kcMu.Unlock()
	return append([]string(nil), b.missing[group]...)
}

// failIfGone turns a vanished group into a transient error (the next pass re-creates it).
func failIfGone(err error) error {
	if isNotFound(err) {
		return failure.Transient(err)
	}
	return err
}
