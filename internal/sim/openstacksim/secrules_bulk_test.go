package openstacksim

import (
	"encoding/json"
	"strconv"
	"testing"
)

// A bulk create makes every rule, in the order asked; one that exists already fails the whole
// request (409) and makes none; a project's quota counts the whole request.
func TestBulkRulesAllOrNone(t *testing.T) {
	sim, c := start(t)
	g := c.id(c.do("POST", "/network/v2.0/security-groups", `{"security_group":{"name":"g"}}`, 201), "security_group")
	rule := func(port string) string {
		return `{"direction":"ingress","ethertype":"IPv4","protocol":"tcp","port_range_min":` + port +
			`,"port_range_max":` + port + `,"remote_ip_prefix":"0.0.0.0/0","security_group_id":"` + g + `"}`
	}
	a := c.do("POST", "/network/v2.0/security-group-rules", `{"security_group_rules":[`+rule("80")+`,`+rule("443")+`]}`, 201)
	var made struct {
		Rules []struct {
			ID  string `json:"id"`
			Min int    `json:"port_range_min"`
		} `json:"security_group_rules"`
	}
	if err := json.Unmarshal(a.body, &made); err != nil || len(made.Rules) != 2 || made.Rules[0].Min != 80 || made.Rules[1].Min != 443 {
		t.Fatalf("bulk create answered %s (%v)", a.body, err)
	}
	before := len(sim.Rules("g"))
	if before < 2 {
		t.Fatalf("%d rules in the group after the bulk create", before)
	}
	c.do("POST", "/network/v2.0/security-group-rules", `{"security_group_rules":[`+rule("22")+`,`+rule("80")+`]}`, 409)
	c.do("POST", "/network/v2.0/security-group-rules", `{"security_group_rules":[`+rule("22")+`,`+rule("22")+`]}`, 409)
	c.do("POST", "/network/v2.0/security-group-rules", `{"security_group_rules":[]}`, 400)
	if got := len(sim.Rules("g")); got != before {
		t.Fatalf("%d rules after refused bulk creates, want %d (none made)", got, before)
	}
	c.do("PUT", "/network/v2.0/quotas/"+c.project, `{"quota":{"security_group_rule":`+strconv.Itoa(before+1)+`}}`, 200)
	c.do("POST", "/network/v2.0/security-group-rules", `{"security_group_rules":[`+rule("22")+`,`+rule("6443")+`]}`, 409)
	if got := len(sim.Rules("g")); got != before {
		t.Fatalf("%d rules after a bulk create over quota, want %d", got, before)
	}
}
