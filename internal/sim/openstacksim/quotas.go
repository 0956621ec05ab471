package openstacksim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// quotaDefaults are each service's default limits (Zed's defaults).
var quotaDefaults = map[string]map[string]int{
	"nova": {"cores": 20, "ram": 51200, "instances": 10, "fixed_ips": -1, "floating_ips": -1,
		"injected_file_content_bytes": 10240, "injected_file_path_bytes": 255, "injected_files": 5,
		"key_pairs": 100, "metadata_items": 128, "security_group_rules": -1, "security_groups": -1,
		"server_group_members": 10, "server_groups": 10},
	"cinder": {"volumes": 10, "gigabytes": 1000, "snapshots": 10, "backups": 10, "backup_gigabytes": 1000,
		"per_volume_gigabytes": -1, "groups": 10},
	"neutron": {"network": 100, "subnet": 100, "subnetpool": -1, "port": 500, "router": 10, "floatingip": 50,
		"rbac_policy": 10, "security_group": 10, "security_group_rule": 100},
}

// limits returns a project's effective limits for one service.
func (st *state) limits(service, projectID string) map[string]int {
	out := map[string]int{}
	for k, v := range quotaDefaults[service] {
		out[k] = v
	}
	for k, v := range st.quotas[service][projectID] {
		out[k] = v
	}
	return out
}

// usage counts what a project uses of each quota of a service.
func (st *state) usage(service, projectID string) map[string]int {
	u := map[string]int{}
	switch service {
	case "nova":
		for _, s := range st.servers {
			if s.ProjectID == projectID {
				u["instances"]++
				u["cores"] += s.VCPUs
				u["ram"] += s.RAM
			}
		}
	case "cinder":
		for _, v := range st.volumes {
			if v.ProjectID == projectID {
				u["volumes"]++
				u["gigabytes"] += v.Size
			}
		}
		for _, v := range st.snapshots { // snapshots count in gigabytes too (no_snapshot_gb_quota=false)
			if v.ProjectID == projectID {
				u["snapshots"]++
				u["gigabytes"] += v.Size
			}
		}
		for _, v := range st.backups {
			if v.ProjectID == projectID {
				u["backups"]++
				u["backup_gigabytes"] += v.Size
			}
		}
	case "neutron":
		count := func(key string, n int) { u[key] += n }
		for _, x := range st.networks {
			count("network", b2i(x.ProjectID == projectID))
		}
		for _, x := range st.subnets {
			count("subnet", b2i(x.ProjectID == projectID))
		}
		for _, x := range st.ports {
			count("port", b2i(x.ProjectID == projectID))
		}
		for _, x := range st.routers {
			count("router", b2i(x.ProjectID == projectID))
		}
		for _, x := range st.floatingIP {
			count("floatingip", b2i(x.ProjectID == projectID))
		}
		for _, x := range st.groups {
			count("security_group", b2i(x.ProjectID == projectID))
		}
		for _, x := range st.rules {
			count("security_group_rule", b2i(x.ProjectID == projectID))
		}
	}
	return u
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// overQuota reports whether one more object of kind would exceed the project's Neutron quota.
func (st *state) overQuota(kind, projectID string) bool {
	limit := st.limits("neutron", projectID)[kind]
	return limit >= 0 && st.usage("neutron", projectID)[kind]+1 > limit
}

// quotaService maps a route's service to its quota wrapper key.
func quotaWrapper(service string) string {
	if service == "neutron" {
		return "quota"
	}
	return "quota_set"
}

// quotaProject returns the target project of a quota route; Cinder's URL also names the
// token's project, which must match.
func (c *call) quotaProject() (string, bool) {
	if c.route.service == "cinder" {
		if c.param(0) != c.tok.projectID {
			c.fail(http.StatusBadRequest, "Malformed request url: project id does not match the token")
			return "", false
		}
		return c.param(1), true
	}
	return c.param(0), true
}

func (c *call) getQuota() {
	p, ok := c.quotaProject()
	if !ok {
		return
	}
	svc := c.route.service
	detail := strings.HasSuffix(c.r.URL.Path, "/details.json") || c.query("usage") == "true"
	if u := c.query("usage"); u != "" && u != "true" && u != "false" {
		c.fail(http.StatusBadRequest, "Invalid value for usage: "+u)
		return
	}
	limits := c.s.st.limits(svc, p)
	body := map[string]any{}
	if svc != "neutron" {
		body["id"] = p
	}
	used := c.s.st.usage(svc, p)
	usedKey := "in_use"
	if svc == "neutron" {
		usedKey = "used"
	}
	for k, v := range limits {
		if detail {
			body[k] = map[string]int{"limit": v, usedKey: used[k], "reserved": 0}
		} else {
			body[k] = v
		}
	}
	c.reply(http.StatusOK, map[string]any{quotaWrapper(svc): body})
}

// novaLimits serves GET /limits?tenant_id= (absolute limits and usage of a project).
func (c *call) novaLimits() {
	p := c.query("tenant_id")
	if p == "" {
		p = c.tok.projectID
	}
	l, u := c.s.st.limits("nova", p), c.s.st.usage("nova", p)
	abs := map[string]int{"maxTotalCores": l["cores"], "maxTotalRAMSize": l["ram"], "maxTotalInstances": l["instances"],
		"maxTotalKeypairs": l["key_pairs"], "maxServerMeta": l["metadata_items"], "maxImageMeta": l["metadata_items"],
		"maxPersonality": l["injected_files"], "maxPersonalitySize": l["injected_file_content_bytes"],
		"maxServerGroups": l["server_groups"], "maxServerGroupMembers": l["server_group_members"],
		"maxTotalFloatingIps": l["floating_ips"], "maxSecurityGroups": l["security_groups"], "maxSecurityGroupRules": l["security_group_rules"],
		"totalCoresUsed": u["cores"], "totalRAMUsed": u["ram"], "totalInstancesUsed": u["instances"],
		"totalFloatingIpsUsed": 0, "totalSecurityGroupsUsed": 0, "totalServerGroupsUsed": 0}
	c.reply(http.StatusOK, map[string]any{"limits": map[string]any{"rate": []any{}, "absolute": abs}})
}

func (c *call) putQuota() {
	p, ok := c.quotaProject()
	if !ok {
		return
	}
	svc := c.route.service
	m, ok := c.object(quotaWrapper(svc))
	if !ok {
		return
	}
	force := false
	if raw, has := m["force"]; has && svc == "nova" {
		if json.Unmarshal(raw, &force) != nil {
			c.fail(http.StatusBadRequest, "Invalid input for field/attribute force")
			return
		}
		delete(m, "force")
	}
	vals, ok := c.quotaValues(svc, m)
	if !ok {
		return
	}
	used := c.s.st.usage(svc, p)
	for _, k := range sortedKeys(vals) {
		v := vals[k]
		if v >= 0 && v < used[k] && (svc == "cinder" || (svc == "nova" && !force)) {
			c.fail(http.StatusBadRequest, belowUsageMessage(svc, k, v, used[k]))
			return
		}
	}
	if c.s.st.quotas[svc][p] == nil {
		c.s.st.quotas[svc][p] = map[string]int{}
	}
	for k, v := range vals {
		c.s.st.quotas[svc][p][k] = v
	}
	out := map[string]any{}
	for k, v := range c.s.st.limits(svc, p) {
		out[k] = v
	}
	c.reply(http.StatusOK, map[string]any{quotaWrapper(svc): out})
}

// quotaValues checks keys and values of a quota update as each service does.
func (c *call) quotaValues(svc string, m map[string]json.RawMessage) (map[string]int, bool) {
	var bad []string
	for k := range m {
		if _, known := quotaDefaults[svc][k]; !known {
			bad = append(bad, k)
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		msg := map[string]string{
			"nova":    fmt.Sprintf("Invalid input for field/attribute quota_set. Additional properties are not allowed (%s were unexpected)", strings.Join(bad, ", ")),
			"cinder":  "Invalid input received: Bad key(s) in quota set: " + strings.Join(bad, ", "),
			"neutron": fmt.Sprintf("Unrecognized attribute(s) '%s'", strings.Join(bad, ", ")),
		}[svc]
		c.fail(http.StatusBadRequest, msg)
		return nil, false
	}
	vals := map[string]int{}
	for k, raw := range m {
		var v int
		if err := json.Unmarshal(raw, &v); err != nil || v < -1 {
			c.fail(http.StatusBadRequest, fmt.Sprintf("Invalid input for %s: %s is not an integer >= -1", k, raw))
			return nil, false
		}
		vals[k] = v
	}
	return vals, true
}

func belowUsageMessage(svc, key string, limit, used int) string {
	if svc == "cinder" {
		return fmt.Sprintf("Quota %s limit must be equal or greater than existing resources. Current usage is %d and the requested limit is %d.", key, used, limit)
	}
	return fmt.Sprintf("Quota limit %d for %s must be greater than or equal to already used and reserved %d.", limit, key, used)
}

func (c *call) deleteQuota() {
	p, ok := c.quotaProject()
	if !ok {
		return
	}
	delete(c.s.st.quotas[c.route.service], p)
	switch c.route.service {
	case "nova":
		c.noContent(http.StatusAccepted)
	case "cinder":
		c.reply(http.StatusOK, map[string]any{})
	default:
		c.noContent(http.StatusNoContent)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
