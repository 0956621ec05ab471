package keycloaksim

import (
	"net/http"
	"sort"
)

// handlers maps route names to handlers. They run under the state lock.
var handlers = map[string]func(*call) result{
	RouteRealm: getRealm, RouteUsers: listUsers, RouteUser: getUser, RouteUserGroups: userGroups,
	RouteJoinGroup: joinGroup, RouteLeaveGroup: leaveGroup,
	RouteGroups: listGroups, RouteCreateGroup: createGroup, RouteGroup: getGroup,
	RouteUpdateGroup: updateGroup, RouteDeleteGroup: deleteGroup,
	RouteChildren: listChildren, RouteCreateChild: createChild, RouteMembers: listMembers,
	RouteServerInfo: serverInfo,
}

func getRealm(c *call) result {
	if !c.anyAdminRole() {
		return forbidden()
	}
	rep := realmRep{ID: c.realm.id, Realm: c.realm.name}
	if c.can(RoleViewRealm) {
		on := true
		rep.Enabled, rep.DisplayName = &on, c.realm.name
	}
	return okResult(rep)
}

// listGroups is GET groups: a search over the whole tree, or the top level.
func listGroups(c *call) result {
	if !c.can(RoleQueryGroups) {
		return forbidden()
	}
	o := repOpts{full: !c.q.boolOr("briefRepresentation", true), count: c.q.boolOr("subGroupsCount", true), access: true}
	first, max := c.q.intOr("first", -1), c.q.intOr("max", -1)
	search, searching := c.q.str["search"]
	if !searching {
		out := []*groupRep{}
		for _, g := range page(c.realm.topLevel(), first, max) {
			rep := c.groupRep(g, o)
			if c.s.feat.inlineSubGroups {
				c.subtree(rep, g, o)
			}
			out = append(out, rep)
		}
		return okResult(out)
	}
	exact := c.q.boolOr("exact", false) && c.s.feat.exactGroups
	matches := page(c.realm.searchByName(search, exact), first, max)
	if !c.q.boolOr("populateHierarchy", true) {
		out := []*groupRep{}
		for _, g := range matches {
			out = append(out, c.groupRep(g, o))
		}
		return okResult(out)
	}
	return okResult(c.hierarchy(matches, o))
}

// hierarchy returns the top-level ancestors of matches with subGroups populated only along the
// paths to the matches (GroupUtils.populateGroupHierarchyFromSubGroups).
func (c *call) hierarchy(matches []*group, o repOpts) []*groupRep {
	reps := map[string]*groupRep{}
	var roots []*groupRep
	for _, m := range matches {
		var parent *groupRep
		for _, g := range c.realm.ancestry(m) {
			rep, seen := reps[g.id]
			if !seen {
				rep = c.groupRep(g, o)
				reps[g.id] = rep
				if parent == nil {
					roots = append(roots, rep)
				} else {
					parent.SubGroups = append(parent.SubGroups, rep)
				}
			}
			parent = rep
		}
	}
	var sortTree func([]*groupRep)
	sortTree = func(list []*groupRep) {
		sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
		for _, r := range list {
			sortTree(r.SubGroups)
		}
	}
	if roots == nil {
		roots = []*groupRep{}
	}
	sortTree(roots)
	return roots
}

// checkName applies Keycloak's name rules: blank is a 400, over 255 characters fails in the
// database (500).
func checkName(name *string) *result {
	if name == nil || blank(*name) {
		r := messageResult(http.StatusBadRequest, "Group name is missing")
		return &r
	}
	if nameTooLong(*name) {
		r := errorResult(http.StatusInternalServerError, "unknown_error")
		return &r
	}
	return nil
}

func createGroup(c *call) result {
	if !c.can(RoleManageUsers) {
		return forbidden()
	}
	in, bad := c.decodeGroup()
	if bad != nil {
		return *bad
	}
	if bad := checkName(in.Name); bad != nil {
		return *bad
	}
	if in.ID != nil {
		return errorResult(http.StatusNotImplemented, "keycloaksim does not model moving a group (POST with an id)")
	}
	if c.realm.siblingNamed("", *in.Name) != nil {
		return messageResult(http.StatusConflict, "Top level group named '"+*in.Name+"' already exists.")
	}
	g := c.realm.createGroup("", *in.Name, in.Attributes)
	return result{status: http.StatusCreated, header: c.location(g.id)}
}

// lookup resolves the {id} group of a group route.
func (c *call) lookup() (*group, *result) {
	g := c.realm.groups[c.rt.id]
	if g == nil {
		r := errorResult(http.StatusNotFound, "Could not find group by id")
		return nil, &r
	}
	return g, nil
}

func getGroup(c *call) result {
	g, bad := c.lookup()
	if bad != nil {
		return *bad
	}
	if !c.can(RoleViewUsers) {
		return forbidden()
	}
	if c.s.feat.inlineSubGroups {
		o := repOpts{full: true, access: true}
		rep := c.groupRep(g, o)
		c.subtree(rep, g, o)
		return okResult(rep)
	}
	return okResult(c.groupRep(g, repOpts{full: true, count: true, access: true}))
}

func updateGroup(c *call) result {
	g, bad := c.lookup()
	if bad != nil {
		return *bad
	}
	if !c.can(RoleManageUsers) {
		return forbidden()
	}
	in, bad := c.decodeGroup()
	if bad != nil {
		return *bad
	}
	if bad := checkName(in.Name); bad != nil {
		return *bad
	}
	if in.ID != nil && *in.ID != g.id {
		return messageResult(http.StatusBadRequest, "Invalid group id")
	}
	if other := c.realm.siblingNamed(g.parent, *in.Name); other != nil && other.id != g.id {
		return messageResult(http.StatusConflict, "Sibling group named '"+*in.Name+"' already exists.")
	}
	g.name = *in.Name
	if in.Attributes != nil {
		g.attrs = copyAttrs(in.Attributes)
	}
	return noContent()
}

func deleteGroup(c *call) result {
	g, bad := c.lookup()
	if bad != nil {
		return *bad
	}
	if !c.can(RoleManageUsers) {
		return forbidden()
	}
	c.realm.deleteGroup(g)
	return noContent()
}

// listChildren is GET groups/{id}/children: defaults first=0, max=10, briefRepresentation=false.
func listChildren(c *call) result {
	if !c.s.feat.children {
		return childrenUnsupported()
	}
	g, bad := c.lookup()
	if bad != nil {
		return *bad
	}
	if !c.can(RoleViewUsers) {
		return forbidden()
	}
	var kids []*group
	search, searching := c.q.str["search"]
	for _, k := range c.realm.childrenOf(g) {
		if c.s.opts.ChildrenSearchIgnored || !searching || search == "" || matchChild(k.name, search, c.q.boolOr("exact", false)) {
			kids = append(kids, k)
		}
	}
	o := repOpts{full: !c.q.boolOr("briefRepresentation", false), count: c.q.boolOr("subGroupsCount", true), access: true}
	out := []*groupRep{}
	for _, k := range page(kids, c.q.intOr("first", 0), c.q.intOr("max", 10)) {
		out = append(out, c.groupRep(k, o))
	}
	return okResult(out)
}

// createChild is POST groups/{id}/children: 201 with the new group (no subGroupCount).
func createChild(c *call) result {
	g, bad := c.lookup()
	if bad != nil {
		return *bad
	}
	if !c.can(RoleManageUsers) {
		return forbidden()
	}
	in, bad := c.decodeGroup()
	if bad != nil {
		return *bad
	}
	if bad := checkName(in.Name); bad != nil {
		return *bad
	}
	if in.ID != nil {
		return errorResult(http.StatusNotImplemented, "keycloaksim does not model moving a group (POST with an id)")
	}
	if c.realm.siblingNamed(g.id, *in.Name) != nil {
		return messageResult(http.StatusConflict, "Sibling group named '"+*in.Name+"' already exists.")
	}
	child := c.realm.createGroup(g.id, *in.Name, in.Attributes)
	return result{status: http.StatusCreated, header: c.location(child.id),
		body: c.groupRep(child, repOpts{full: true, access: true})}
}

// listMembers is GET groups/{id}/members: direct members ordered by username, max 100 by default.
func listMembers(c *call) result {
	g, bad := c.lookup()
	if bad != nil {
		return *bad
	}
	if !c.can(RoleViewUsers) {
		return forbidden()
	}
	users := make([]*user, 0, len(g.members))
	for uid := range g.members {
		users = append(users, c.realm.users[uid])
	}
	brief := c.q.boolOr("briefRepresentation", false)
	out := []userRep{}
	for _, u := range page(sortedUsers(users), c.q.intOr("first", 0), c.q.intOr("max", 100)) {
		out = append(out, userRepOf(u, brief))
	}
	return okResult(out)
}
