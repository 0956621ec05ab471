package openstacksim

import (
	"encoding/json"
	"net/http"
	"sort"
)

func (u *user) render(host string) map[string]any {
	m := map[string]any{}
	for k, v := range u.Extra {
		m[k] = v
	}
	for k, v := range map[string]any{"id": u.ID, "name": u.Name, "domain_id": u.DomainID, "enabled": u.Enabled,
		"password_expires_at": nil, "options": map[string]any{},
		"links": map[string]string{"self": "http://" + host + "/identity/v3/users/" + u.ID}} {
		m[k] = v
	}
	if u.DefaultProjectID != "" {
		m["default_project_id"] = u.DefaultProjectID
	}
	if u.Description != "" {
		m["description"] = u.Description
	}
	return m
}

var userFields = map[string]bool{"name": true, "domain_id": true, "password": true, "default_project_id": true,
	"description": true, "enabled": true, "options": true}

type userBody struct {
	name, domainID, password, project, desc *string
	enabled                                 *bool
	extra                                   map[string]json.RawMessage
}

func (c *call) userBody() (userBody, bool) {
	m, ok := c.object("user")
	if !ok {
		return userBody{}, false
	}
	var b userBody
	vals := map[string]any{}
	strs := map[string]**string{"name": &b.name, "domain_id": &b.domainID, "password": &b.password,
		"default_project_id": &b.project, "description": &b.desc}
	for k, dst := range strs {
		if _, has := m[k]; has {
			*dst = new(string)
			vals[k] = *dst
		}
	}
	if _, has := m["enabled"]; has {
		b.enabled = new(bool)
		vals["enabled"] = b.enabled
	}
	if !c.fields(m, vals) {
		return b, false
	}
	b.extra = map[string]json.RawMessage{}
	for k, v := range m {
		if !userFields[k] {
			b.extra[k] = v
		}
	}
	return b, true
}

func (c *call) createUser() {
	b, ok := c.userBody()
	if !ok {
		return
	}
	st := c.s.st
	if b.name == nil || !validName(*b.name) {
		c.fail(http.StatusBadRequest, "'name' is a required property of 1 to 64 characters")
		return
	}
	domainID := "default"
	if b.domainID != nil && *b.domainID != "" {
		domainID = *b.domainID
	}
	if st.domains[domainID] == nil {
		c.fail(http.StatusBadRequest, "Could not find domain: "+domainID)
		return
	}
	if st.findUser("", *b.name, domainID) != nil {
		c.fail(http.StatusConflict, "Conflict occurred attempting to store user - Duplicate entry found with name "+*b.name+" at domain ID "+domainID+".")
		return
	}
	u := &user{ID: newID(false), Name: *b.name, DomainID: domainID, Enabled: b.enabled == nil || *b.enabled, Extra: b.extra}
	b.apply(u)
	st.users[u.ID] = u
	c.reply(http.StatusCreated, map[string]any{"user": u.render(c.r.Host)})
}

func (b userBody) apply(u *user) {
	if b.password != nil {
		u.Password = *b.password
	}
	if b.project != nil {
		u.DefaultProjectID = *b.project
	}
	if b.desc != nil {
		u.Description = *b.desc
	}
	if b.enabled != nil {
		u.Enabled = *b.enabled
	}
}

func (c *call) user() *user {
	u := c.s.st.users[c.param(0)]
	if u == nil {
		c.fail(http.StatusNotFound, "Could not find user: "+c.param(0))
	}
	return u
}

func (c *call) getUser() {
	if u := c.user(); u != nil {
		c.reply(http.StatusOK, map[string]any{"user": u.render(c.r.Host)})
	}
}

func (c *call) updateUser() {
	u := c.user()
	if u == nil {
		return
	}
	b, ok := c.userBody()
	if !ok {
		return
	}
	if b.name != nil {
		u.Name = *b.name
	}
	b.apply(u)
	c.reply(http.StatusOK, map[string]any{"user": u.render(c.r.Host)})
}

func (c *call) deleteUser() {
	u := c.user()
	if u == nil {
		return
	}
	delete(c.s.st.users, u.ID)
	for a := range c.s.st.assignments {
		if a.userID == u.ID {
			delete(c.s.st.assignments, a)
		}
	}
	c.noContent(http.StatusNoContent)
}

func (c *call) listUsers() {
	var out []map[string]any
	for _, u := range c.s.st.users {
		if n := c.query("name"); n != "" && u.Name != n {
			continue
		}
		if d := c.query("domain_id"); d != "" && u.DomainID != d {
			continue
		}
		out = append(out, u.render(c.r.Host))
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["name"].(string) < out[j]["name"].(string) })
	c.reply(http.StatusOK, map[string]any{"users": nonNil(out), "links": c.links()})
}

// grant and revoke serve PUT/DELETE /v3/projects/{p}/users/{u}/roles/{r}.
func (c *call) grant() {
	if a, ok := c.assignmentTarget(); ok {
		c.s.st.assignments[a] = true
		c.noContent(http.StatusNoContent)
	}
}

func (c *call) revoke() {
	a, ok := c.assignmentTarget()
	if !ok {
		return
	}
	if !c.s.st.assignments[a] {
		c.fail(http.StatusNotFound, "Could not find role assignment")
		return
	}
	delete(c.s.st.assignments, a)
	c.noContent(http.StatusNoContent)
}

func (c *call) assignmentTarget() (assignment, bool) {
	st := c.s.st
	p, u, r := c.param(0), c.param(1), c.param(2)
	switch {
	case st.projects[p] == nil:
		c.fail(http.StatusNotFound, "Could not find project: "+p)
	case st.users[u] == nil:
		c.fail(http.StatusNotFound, "Could not find user: "+u)
	case st.roles[r] == nil:
		c.fail(http.StatusNotFound, "Could not find role: "+r)
	default:
		return assignment{u, p, r}, true
	}
	return assignment{}, false
}

func (c *call) listAssignments() {
	st := c.s.st
	names := c.query("include_names") == "true" || c.query("include_names") == "1"
	var out []map[string]any
	for a := range st.assignments {
		if (c.query("scope.project.id") != "" && a.projectID != c.query("scope.project.id")) ||
			(c.query("role.id") != "" && a.roleID != c.query("role.id")) ||
			(c.query("user.id") != "" && a.userID != c.query("user.id")) {
			continue
		}
		out = append(out, st.renderAssignment(a, names))
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i]["links"].(map[string]string)["assignment"] < out[j]["links"].(map[string]string)["assignment"]
	})
	c.reply(http.StatusOK, map[string]any{"role_assignments": nonNil(out), "links": c.links()})
}

func (st *state) renderAssignment(a assignment, names bool) map[string]any {
	u, p, r := map[string]any{"id": a.userID}, map[string]any{"id": a.projectID}, map[string]any{"id": a.roleID}
	if names {
		if usr := st.users[a.userID]; usr != nil {
			u["name"] = usr.Name
			u["domain"] = map[string]string{"id": usr.DomainID, "name": st.domains[usr.DomainID].Name}
		}
		if prj := st.projects[a.projectID]; prj != nil {
			p["name"] = prj.Name
			p["domain"] = map[string]string{"id": prj.DomainID, "name": st.domains[prj.DomainID].Name}
		}
		r["name"] = st.roles[a.roleID].Name
	}
	return map[string]any{"user": u, "scope": map[string]any{"project": p}, "role": r,
		"links": map[string]string{"assignment": "/v3/projects/" + a.projectID + "/users/" + a.userID + "/roles/" + a.roleID}}
}
