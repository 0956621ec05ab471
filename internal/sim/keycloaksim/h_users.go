package keycloaksim

import (
	"net/http"
	"strings"
)

// listUsers is GET users: search (substring on the username), username (exact or substring),
// first (default none) and max (default 100), ordered by username.
func listUsers(c *call) result {
	if !c.can(RoleQueryUsers) {
		return forbidden()
	}
	exact := c.q.boolOr("exact", false)
	var matched []*user
	for _, u := range c.realm.users {
		if userMatches(u, c.q, exact) {
			matched = append(matched, u)
		}
	}
	brief := c.q.boolOr("briefRepresentation", false)
	out := []userRep{}
	for _, u := range page(sortedUsers(matched), c.q.intOr("first", -1), c.q.intOr("max", 100)) {
		out = append(out, userRepOf(u, brief))
	}
	return okResult(out)
}

// userMatches applies the username and search filters. Keycloak lower-cases both the stored
// username and the searched value. assumption: search="*" and quoted searches are not modelled;
// search is a plain case-insensitive substring of the username.
func userMatches(u *user, q query, exact bool) bool {
	for _, name := range []string{"username", "search"} {
		v, ok := q.str[name]
		if !ok {
			continue
		}
		v = strings.ToLower(strings.TrimSpace(v))
		if exact && u.username != v || !exact && !strings.Contains(u.username, v) {
			return false
		}
	}
	return true
}

// getUser is GET users/{id}. An unknown id is "User not found" for a caller who may query users.
func getUser(c *call) result {
	u := c.realm.users[c.rt.id]
	if u == nil {
		if c.can(RoleQueryUsers) {
			return errorResult(http.StatusNotFound, "User not found")
		}
		return forbidden()
	}
	if !c.can(RoleViewUsers) {
		return forbidden()
	}
	return okResult(userRepOf(u, false))
}

// userGroups is GET users/{id}/groups: direct memberships ordered by name, brief by default.
func userGroups(c *call) result {
	u := c.realm.users[c.rt.id]
	if u == nil {
		return errorResult(http.StatusNotFound, "User not found")
	}
	if !c.can(RoleViewUsers) {
		return forbidden()
	}
	var groups []*group
	search := strings.ToLower(c.q.str["search"])
	for gid := range u.groups {
		if g := c.realm.groups[gid]; g != nil && strings.Contains(strings.ToLower(g.name), search) {
			groups = append(groups, g)
		}
	}
	o := repOpts{full: !c.q.boolOr("briefRepresentation", true)}
	out := []*groupRep{}
	for _, g := range page(sortedGroups(groups), c.q.intOr("first", -1), c.q.intOr("max", -1)) {
		out = append(out, c.groupRep(g, o))
	}
	return okResult(out)
}

// membership resolves a membership route in Keycloak's order: the user, the caller's rights,
// then the group.
func (c *call) membership() (*user, *group, *result) {
	u := c.realm.users[c.rt.id]
	if u == nil {
		r := errorResult(http.StatusNotFound, "User not found")
		return nil, nil, &r
	}
	if !c.can(RoleManageUsers) {
		r := forbidden()
		return nil, nil, &r
	}
	g := c.realm.groups[c.rt.gid]
	if g == nil {
		r := errorResult(http.StatusNotFound, "Group not found")
		return nil, nil, &r
	}
	return u, g, nil
}

// joinGroup is PUT users/{id}/groups/{gid}: idempotent, 204.
func joinGroup(c *call) result {
	u, g, bad := c.membership()
	if bad != nil {
		return *bad
	}
	u.groups[g.id] = true
	g.members[u.id] = true
	return noContent()
}

// leaveGroup is DELETE users/{id}/groups/{gid}: 204 even when the user was not a member.
func leaveGroup(c *call) result {
	u, g, bad := c.membership()
	if bad != nil {
		return *bad
	}
	delete(u.groups, g.id)
	delete(g.members, u.id)
	return noContent()
}
