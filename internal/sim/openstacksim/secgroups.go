package openstacksim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"sort"
)

func (g *secGroup) render(st *state) map[string]any {
	rules := []map[string]any{}
	for _, r := range st.rules {
		if r.GroupID == g.ID {
			rules = append(rules, r.render())
		}
	}
	sort.Slice(rules, func(i, j int) bool { return rules[i]["id"].(string) < rules[j]["id"].(string) })
	return map[string]any{"id": g.ID, "name": g.Name, "description": g.Description, "tenant_id": g.ProjectID,
		"project_id": g.ProjectID, "security_group_rules": rules, "stateful": true}
}

func (r *secRule) render() map[string]any {
	opt := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	port := func(p *int) any {
		if p == nil {
			return nil
		}
		return *p
	}
	return map[string]any{"id": r.ID, "security_group_id": r.GroupID, "tenant_id": r.ProjectID, "project_id": r.ProjectID,
		"direction": r.Direction, "ethertype": r.Ethertype, "protocol": opt(r.Protocol), "port_range_min": port(r.PortMin),
		"port_range_max": port(r.PortMax), "remote_ip_prefix": opt(r.RemoteIPPrefix), "remote_group_id": opt(r.RemoteGroupID),
		"description": r.Description}
}

// ensureDefaultGroup creates the project's "default" group on first use, as Neutron does.
func (st *state) ensureDefaultGroup(project string) {
	for _, g := range st.groups {
		if g.ProjectID == project && g.Name == "default" {
			return
		}
	}
	g := &secGroup{ID: newID(true), Name: "default", Description: "Default security group", ProjectID: project}
	st.groups[g.ID] = g
	for _, eth := range []string{"IPv4", "IPv6"} {
		st.addRule(&secRule{GroupID: g.ID, ProjectID: project, Direction: "egress", Ethertype: eth})
		st.addRule(&secRule{GroupID: g.ID, ProjectID: project, Direction: "ingress", Ethertype: eth, RemoteGroupID: g.ID})
	}
}

func (st *state) addRule(r *secRule) {
	r.ID = newID(true)
	st.rules[r.ID] = r
}

func (c *call) createGroup() {
	m, ok := c.object("security_group", "name", "description", "project_id", "tenant_id", "stateful")
	if !ok {
		return
	}
	var name, desc string
	project, ok := c.owner(m)
	if !ok || !c.fields(m, map[string]any{"name": &name, "description": &desc, "stateful": new(bool)}) {
		return
	}
	st := c.s.st
	if name != "default" {
		st.ensureDefaultGroup(project)
	}
	if c.overQuota("security_group", project) {
		return
	}
	g := &secGroup{ID: newID(true), Name: name, Description: desc, ProjectID: project}
	st.groups[g.ID] = g
	for _, eth := range []string{"IPv4", "IPv6"} {
		st.addRule(&secRule{GroupID: g.ID, ProjectID: project, Direction: "egress", Ethertype: eth})
	}
	c.reply(http.StatusCreated, map[string]any{"security_group": g.render(st)})
}

// listGroups lists security groups. Like Neutron, a list filtered by project creates that
// project's "default" group if it has none.
func (c *call) listGroups() {
	if p := c.query("project_id"); p != "" {
		c.s.st.ensureDefaultGroup(p)
	}
	var items []map[string]any
	for _, g := range c.s.st.groups {
		items = append(items, g.render(c.s.st))
	}
	c.list("security_groups", items)
}

func (c *call) deleteGroup() {
	st := c.s.st
	g := st.groups[c.param(0)]
	if g == nil {
		c.fail(http.StatusNotFound, "Security group "+c.param(0)+" does not exist")
		return
	}
	for id, r := range st.rules {
		if r.GroupID == g.ID {
			delete(st.rules, id)
		}
	}
	delete(st.groups, g.ID)
	c.noContent(http.StatusNoContent)
}

// ruleKeys are the members a rule to create may carry.
var ruleKeys = []string{"direction", "ethertype", "security_group_id", "protocol", "port_range_min",
	"port_range_max", "remote_ip_prefix", "remote_group_id", "project_id", "tenant_id", "description"}

// createRule makes one rule ({"security_group_rule": {...}}) or, in bulk, several
// ({"security_group_rules": [...]}: secrules_bulk.go).
func (c *call) createRule() {
	if bulk, ok := c.bulkRules(); ok {
		c.createRules(bulk)
		return
	}
	m, ok := c.object("security_group_rule", ruleKeys...)
	if !ok {
		return
	}
	r, ok := c.newRule(m)
	if !ok {
		return
	}
	if c.overQuota("security_group_rule", r.ProjectID) {
		return
	}
	c.s.st.addRule(r)
	c.reply(http.StatusCreated, map[string]any{"security_group_rule": r.render()})
}

// newRule parses a rule to create and answers 409 when the same rule exists (Neutron's
// SecurityGroupRuleExists).
func (c *call) newRule(m map[string]json.RawMessage) (*secRule, bool) {
	r, ok := c.parseRule(m)
	if !ok {
		return nil, false
	}
	for _, other := range c.s.st.rules {
		if other.same(r) {
			c.fail(http.StatusConflict, "Security group rule already exists. Rule id is "+other.ID+".")
			return nil, false
		}
	}
	return r, true
}

// parseRule decodes and validates one rule to create (its group must exist); a bad one is
// answered.
func (c *call) parseRule(m map[string]json.RawMessage) (*secRule, bool) {
	r := &secRule{Ethertype: "IPv4"}
	project, ok := c.owner(m)
	if !ok || !c.fields(m, map[string]any{"direction": &r.Direction, "ethertype": &r.Ethertype, "security_group_id": &r.GroupID,
		"protocol": &r.Protocol, "port_range_min": &r.PortMin, "port_range_max": &r.PortMax, "remote_ip_prefix": &r.RemoteIPPrefix,
		"remote_group_id": &r.RemoteGroupID, "description": &r.Description}) {
		return nil, false
	}
	g := c.s.st.groups[r.GroupID]
	if g == nil {
		c.fail(http.StatusNotFound, "Security group "+r.GroupID+" does not exist")
		return nil, false
	}
	if _, given := m["project_id"]; !given {
		project = g.ProjectID
	}
	r.ProjectID = project
	if msg := r.validate(); msg != "" {
		c.fail(http.StatusBadRequest, msg)
		return nil, false
	}
	return r, true
}

// deleteRule removes one rule (Neutron: 204, or 404 "Security group rule <id> does not exist").
func (c *call) deleteRule() {
	st := c.s.st
	r := st.rules[c.param(0)]
	if r == nil || r.ProjectID != c.tok.projectID && !c.tok.admin {
		c.fail(http.StatusNotFound, "Security group rule "+c.param(0)+" does not exist")
		return
	}
	delete(st.rules, r.ID)
	c.noContent(http.StatusNoContent)
}

func (r *secRule) validate() string {
	if r.Direction != "ingress" && r.Direction != "egress" {
		return fmt.Sprintf("Invalid input for direction. Reason: %q is not in [ingress, egress].", r.Direction)
	}
	if r.Ethertype != "IPv4" && r.Ethertype != "IPv6" {
		return fmt.Sprintf("Invalid input for ethertype. Reason: %q is not in [IPv4, IPv6].", r.Ethertype)
	}
	switch r.Protocol {
	case "tcp", "udp":
		if (r.PortMin == nil) != (r.PortMax == nil) || (r.PortMin != nil && (*r.PortMin < 1 || *r.PortMax > 65535 || *r.PortMin > *r.PortMax)) {
			return "For TCP/UDP protocols, port_range_min must be <= port_range_max"
		}
	case "", "icmp":
		if r.Protocol == "" && (r.PortMin != nil || r.PortMax != nil) {
			return "Must also specify protocol if port range is given."
		}
	default:
		return fmt.Sprintf("Security group rule protocol %s not supported.", r.Protocol)
	}
	if r.RemoteIPPrefix != "" {
		p, err := netip.ParsePrefix(r.RemoteIPPrefix)
		if err != nil || p.Addr().Is4() != (r.Ethertype == "IPv4") {
			return fmt.Sprintf("Conflicting value ethertype %s for CIDR %s", r.Ethertype, r.RemoteIPPrefix)
		}
	}
	return ""
}

func (r *secRule) same(o *secRule) bool {
	eq := func(a, b *int) bool { return (a == nil && b == nil) || (a != nil && b != nil && *a == *b) }
	return r.GroupID == o.GroupID && r.Direction == o.Direction && r.Ethertype == o.Ethertype && r.Protocol == o.Protocol &&
		eq(r.PortMin, o.PortMin) && eq(r.PortMax, o.PortMax) && r.RemoteIPPrefix == o.RemoteIPPrefix && r.RemoteGroupID == o.RemoteGroupID
}
