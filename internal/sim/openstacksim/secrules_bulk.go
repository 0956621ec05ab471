package openstacksim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Bulk creation of security group rules, as Neutron does it: POST /v2.0/security-group-rules
// with {"security_group_rules": [{...}, ...]} makes every rule or none — each is validated as
// a single create is, a rule that exists already (or twice in the request) is 409
// SecurityGroupRuleExists for the whole request, and the answer is 201 with the rules in the
// order asked (neutron/db/securitygroups_db.py, create_security_group_rule_bulk_native: one
// transaction; api-ref "Create security group rule", bulk create).

// bulkRules is the request's list of rules when its body is a bulk create.
func (c *call) bulkRules() ([]map[string]json.RawMessage, bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(c.body, &top) != nil {
		return nil, false
	}
	raw, ok := top["security_group_rules"]
	if !ok {
		return nil, false
	}
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		list = []map[string]json.RawMessage{} // answered as malformed below
	}
	return list, true
}

// createRules makes the rules of a bulk create, all or none.
func (c *call) createRules(list []map[string]json.RawMessage) {
	var top map[string]json.RawMessage
	_ = json.Unmarshal(c.body, &top)
	if len(top) != 1 || len(list) == 0 {
		c.fail(http.StatusBadRequest, "'security_group_rules' must be a non-empty list and the only property")
		return
	}
	made := make([]*secRule, 0, len(list))
	for _, m := range list {
		if bad := unknownKeys(m, ruleKeys); len(bad) > 0 {
			c.fail(http.StatusBadRequest, fmt.Sprintf("Unrecognized attribute(s) '%v'", bad))
			return
		}
		r, ok := c.newRule(m)
		if !ok {
			return
		}
		for _, other := range made {
			if other.same(r) {
				c.fail(http.StatusConflict, "Duplicate Security Group Rule in POST.")
				return
			}
		}
		made = append(made, r)
	}
	st := c.s.st
	for i, r := range made {
		if st.overQuota("security_group_rule", r.ProjectID) {
			for _, done := range made[:i] {
				delete(st.rules, done.ID)
			}
			c.fail(http.StatusConflict, "Quota exceeded for resources: ['security_group_rule'].")
			return
		}
		st.addRule(r)
	}
	out := make([]map[string]any, len(made))
	for i, r := range made {
		out[i] = r.render()
	}
	c.reply(http.StatusCreated, map[string]any{"security_group_rules": out})
}
