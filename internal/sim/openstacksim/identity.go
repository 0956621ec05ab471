package openstacksim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

func (p *project) render(host string) map[string]any {
	m := map[string]any{}
	for k, v := range p.Extra {
		m[k] = v
	}
	for k, v := range map[string]any{"id": p.ID, "name": p.Name, "domain_id": p.DomainID, "description": p.Description,
		"enabled": p.Enabled, "parent_id": p.DomainID, "is_domain": false, "tags": nonNil(p.Tags), "options": map[string]any{},
		"links": map[string]string{"self": "http://" + host + "/identity/v3/projects/" + p.ID}} {
		m[k] = v
	}
	return m
}

var projectFields = map[string]bool{"name": true, "domain_id": true, "description": true, "enabled": true,
	"tags": true, "parent_id": true, "is_domain": true, "options": true}

// projectBody decodes a project create/update body; unknown members are kept as extras, as
// Keystone does (its schema allows additional properties).
func (c *call) projectBody() (name, domainID, desc *string, enabled *bool, tags *[]string, extra map[string]json.RawMessage, ok bool) {
	m, ok := c.object("project")
	if !ok {
		return
	}
	name, domainID, desc, enabled, tags = new(string), new(string), new(string), new(bool), new([]string)
	if !c.fields(m, map[string]any{"name": name, "domain_id": domainID, "description": desc, "enabled": enabled, "tags": tags}) {
		return nil, nil, nil, nil, nil, nil, false
	}
	extra = map[string]json.RawMessage{}
	for k, v := range m {
		if !projectFields[k] {
			extra[k] = v
		}
	}
	if _, has := m["tags"]; !has {
		tags = nil
	} else if msg := checkTags(*tags); msg != "" {
		c.fail(http.StatusBadRequest, msg)
		return nil, nil, nil, nil, nil, nil, false
	}
	if _, has := m["name"]; !has {
		name = nil
	}
	if _, has := m["enabled"]; !has {
		enabled = nil
	}
	if _, has := m["description"]; !has {
		desc = nil
	}
	return name, domainID, desc, enabled, tags, extra, true
}

func checkTags(tags []string) string {
	if len(tags) > 80 {
		return "Invalid input for field 'tags': more than 80 tags"
	}
	seen := map[string]bool{}
	for _, t := range tags {
		if len(t) < 1 || len(t) > 255 || strings.ContainsAny(t, ",/") || seen[t] {
			return fmt.Sprintf("Invalid input for field 'tags': %q is not a valid, unique tag", t)
		}
		seen[t] = true
	}
	return ""
}

func validName(n string) bool { return len(n) >= 1 && len(n) <= 64 && strings.TrimSpace(n) != "" }

func (c *call) createProject() {
	name, domainID, desc, enabled, tags, extra, ok := c.projectBody()
	if !ok {
		return
	}
	st := c.s.st
	switch {
	case name == nil || !validName(*name):
		c.fail(http.StatusBadRequest, "'name' is a required property of 1 to 64 characters")
		return
	case *domainID == "":
		*domainID = "default"
	}
	if st.domains[*domainID] == nil {
		c.fail(http.StatusBadRequest, "Could not find domain: "+*domainID)
		return
	}
	if st.findProject("", *name, *domainID) != nil {
		c.fail(http.StatusConflict, "Conflict occurred attempting to store project - it is not permitted to have two projects with the same name in the same domain: "+*name)
		return
	}
	p := &project{ID: newID(false), Name: *name, DomainID: *domainID, Enabled: enabled == nil || *enabled, Extra: extra}
	if desc != nil {
		p.Description = *desc
	}
	if tags != nil {
		p.Tags = append([]string(nil), *tags...)
	}
	st.projects[p.ID] = p
	c.reply(http.StatusCreated, map[string]any{"project": p.render(c.r.Host)})
}

func (c *call) listProjects() {
	want := strings.Split(c.query("tags"), ",")
	var out []map[string]any
	for _, p := range c.s.st.sortedProjects() {
		if n := c.query("name"); n != "" && p.Name != n {
			continue
		}
		if d := c.query("domain_id"); d != "" && p.DomainID != d {
			continue
		}
		if c.query("tags") != "" && !hasAll(p.Tags, want) {
			continue
		}
		out = append(out, p.render(c.r.Host))
	}
	c.reply(http.StatusOK, map[string]any{"projects": nonNil(out), "links": c.links()})
}

func hasAll(have, want []string) bool {
	set := map[string]bool{}
	for _, h := range have {
		set[h] = true
	}
	for _, w := range want {
		if !set[w] {
			return false
		}
	}
	return true
}

func (st *state) sortedProjects() []*project {
	out := make([]*project, 0, len(st.projects))
	for _, p := range st.projects {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (c *call) project() *project {
	p := c.s.st.projects[c.param(0)]
	if p == nil {
		c.fail(http.StatusNotFound, "Could not find project: "+c.param(0))
	}
	return p
}

func (c *call) getProject() {
	if p := c.project(); p != nil {
		c.reply(http.StatusOK, map[string]any{"project": p.render(c.r.Host)})
	}
}

func (c *call) updateProject() {
	p := c.project()
	if p == nil {
		return
	}
	name, _, desc, enabled, tags, extra, ok := c.projectBody()
	if !ok {
		return
	}
	if name != nil {
		if other := c.s.st.findProject("", *name, p.DomainID); other != nil && other != p {
			c.fail(http.StatusConflict, "Conflict occurred attempting to store project: duplicate name "+*name)
			return
		}
		p.Name = *name
	}
	if desc != nil {
		p.Description = *desc
	}
	if enabled != nil {
		p.Enabled = *enabled
	}
	if tags != nil {
		p.Tags = append([]string(nil), *tags...)
	}
	if p.Extra == nil {
		p.Extra = map[string]json.RawMessage{}
	}
	for k, v := range extra {
		p.Extra[k] = v
	}
	c.reply(http.StatusOK, map[string]any{"project": p.render(c.r.Host)})
}

func (c *call) deleteProject() {
	p := c.project()
	if p == nil {
		return
	}
	delete(c.s.st.projects, p.ID)
	for a := range c.s.st.assignments {
		if a.projectID == p.ID {
			delete(c.s.st.assignments, a)
		}
	}
	c.noContent(http.StatusNoContent)
}
