package openstacksim

import (
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Nova server listing, reading and deletion.

const novaTime = "2006-01-02T15:04:05Z"

// status is the server's Nova status, moving BUILD to ACTIVE once the build delay is over.
func (v *server) status(now time.Time) string {
	switch {
	case v.Status == "":
		return "ACTIVE"
	case v.Status == "BUILD" && !now.Before(v.readyAt):
		v.Status = "ACTIVE"
	}
	return v.Status
}

// serverFilter selects the servers a list request asks for.
func (c *call) serverFilter() (func(*server) bool, bool) {
	project := c.tok.projectID
	if t := c.query("tenant_id"); t != "" || allTenants(c) {
		if !allTenants(c) || t == "" {
			c.fail(http.StatusBadRequest, "the simulator filters on tenant_id together with all_tenants only")
			return nil, false
		}
		project = t
	}
	var tags []string
	if t := c.query("tags"); t != "" {
		if major, minor := novaMicroversion(c.r); major == 2 && minor < 26 {
			c.fail(http.StatusBadRequest, "Invalid filter field: tags (needs microversion 2.26)")
			return nil, false
		}
		tags = strings.Split(t, ",")
	}
	var nameRe *regexp.Regexp
	if n := c.query("name"); n != "" {
		re, err := regexp.Compile(n)
		if err != nil {
			c.fail(http.StatusBadRequest, "Invalid filter field: name")
			return nil, false
		}
		nameRe = re
	}
	return func(v *server) bool {
		return v.ProjectID == project && hasAll(v.Tags, tags) && (nameRe == nil || nameRe.MatchString(v.Name))
	}, true
}

func (c *call) serverList(detail bool) {
	keep, ok := c.serverFilter()
	if !ok {
		return
	}
	out := []map[string]any{}
	for _, v := range c.s.st.servers {
		if !keep(v) {
			continue
		}
		if detail {
			out = append(out, c.renderServer(v))
		} else {
			out = append(out, map[string]any{"id": v.ID, "name": v.Name, "links": []any{}})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["id"].(string) < out[j]["id"].(string) })
	c.reply(http.StatusOK, map[string]any{"servers": out})
}

func (c *call) listServers()      { c.serverList(true) }
func (c *call) listServersBrief() { c.serverList(false) }

func (c *call) getServer() {
	v := c.s.st.servers[c.param(0)]
	if v == nil || v.ProjectID != c.tok.projectID && !c.tok.admin {
		c.fail(http.StatusNotFound, "Instance "+c.param(0)+" could not be found.")
		return
	}
	c.reply(http.StatusOK, map[string]any{"server": c.renderServer(v)})
}

// renderServer is a server as Nova shows it at the request's microversion.
func (c *call) renderServer(v *server) map[string]any {
	st := c.s.st
	major, minor := novaMicroversion(c.r)
	at := func(m int) bool { return major == 2 && minor >= m }
	var task any
	if v.deleting {
		task = "deleting"
	}
	status := v.status(time.Now())
	created := v.Created
	if created.IsZero() {
		created = time.Unix(0, 0).UTC()
	}
	groups := []map[string]string{}
	for _, g := range v.SecurityGroups {
		groups = append(groups, map[string]string{"name": g})
	}
	vols := []map[string]any{}
	for _, vol := range st.volumes {
		if vol.AttachedTo == v.ID {
			vols = append(vols, map[string]any{"id": vol.ID, "delete_on_termination": vol.deleteOnTermination})
		}
	}
	sort.Slice(vols, func(i, j int) bool { return vols[i]["id"].(string) < vols[j]["id"].(string) })
	m := map[string]any{"id": v.ID, "name": v.Name, "tenant_id": v.ProjectID, "user_id": v.UserID, "status": status,
		"OS-EXT-STS:task_state": task, "OS-EXT-STS:vm_state": strings.ToLower(status), "metadata": nonNilMap(v.Metadata),
		"addresses": st.serverAddresses(v), "image": "", "created": created.Format(novaTime), "updated": created.Format(novaTime),
		"key_name": nilIfEmpty(v.KeyName), "security_groups": groups, "os-extended-volumes:volumes_attached": vols,
		"accessIPv4": "", "accessIPv6": "", "hostId": "", "links": []any{}, "progress": 0, "config_drive": ""}
	f := st.flavors[v.FlavorID]
	switch {
	case f != nil && at(47):
		m["flavor"] = map[string]any{"vcpus": f.VCPUs, "ram": f.RAMMB, "disk": f.Disk, "ephemeral": 0, "swap": 0,
			"original_name": f.Name, "extra_specs": map[string]string{}}
	case f != nil:
		m["flavor"] = map[string]any{"id": f.ID, "links": []any{}}
	default:
		m["flavor"] = map[string]any{"vcpus": v.VCPUs, "ram": v.RAM}
	}
	if at(26) {
		m["tags"] = nonNil(v.Tags)
	}
	return m
}

// serverAddresses groups the server's fixed and floating addresses by network name.
func (st *state) serverAddresses(v *server) map[string]any {
	out := map[string]any{}
	for _, pid := range v.Ports {
		p := st.ports[pid]
		if p == nil || p.DeviceID != v.ID {
			continue // not bound yet: the server is being built
		}
		name := p.NetworkID
		if n := st.networks[p.NetworkID]; n != nil {
			name = n.Name
		}
		var list []map[string]any
		if l, ok := out[name].([]map[string]any); ok {
			list = l
		}
		mac := "fa:16:3e:" + p.ID[0:2] + ":" + p.ID[2:4] + ":" + p.ID[4:6]
		for _, ip := range p.FixedIPs {
			list = append(list, map[string]any{"addr": ip.IPAddress, "version": 4, "OS-EXT-IPS:type": "fixed", "OS-EXT-IPS-MAC:mac_addr": mac})
		}
		for _, f := range st.floatingIP {
			if f.PortID == p.ID {
				list = append(list, map[string]any{"addr": f.Address, "version": 4, "OS-EXT-IPS:type": "floating", "OS-EXT-IPS-MAC:mac_addr": mac})
			}
		}
		out[name] = list
	}
	return out
}

// removeServer deletes a server as Nova does: volumes marked delete_on_termination go with
// it, other volumes are detached, the ports Nova made are deleted and pre-created ports are
// unbound; floating IPs on deleted ports are disassociated.
func (st *state) removeServer(id string) {
	v := st.servers[id]
	delete(st.servers, id)
	for vid, vol := range st.volumes {
		if vol.AttachedTo != id {
			continue
		}
		if vol.deleteOnTermination {
			delete(st.volumes, vid)
			continue
		}
		vol.AttachedTo = ""
	}
	if v == nil {
		return
	}
	made := map[string]bool{}
	for _, p := range v.NovaPorts {
		made[p] = true
	}
	for _, pid := range v.Ports {
		p := st.ports[pid]
		if p == nil {
			continue
		}
		if !made[pid] {
			p.DeviceID, p.DeviceOwner = "", ""
			continue
		}
		for _, f := range st.floatingIP {
			if f.PortID == pid {
				f.PortID, f.FixedIP = "", ""
			}
		}
		delete(st.ports, pid)
	}
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
