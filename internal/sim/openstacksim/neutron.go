package openstacksim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"sort"
)

// Neutron networks, subnets, ports and floating IPs.

func (n *network) render(st *state) map[string]any {
	var subs []string
	for _, s := range st.subnets {
		if s.NetworkID == n.ID {
			subs = append(subs, s.ID)
		}
	}
	sort.Strings(subs)
	return map[string]any{"id": n.ID, "name": n.Name, "tenant_id": n.ProjectID, "project_id": n.ProjectID,
		"admin_state_up": true, "mtu": 1450, "status": "ACTIVE", "subnets": nonNil(subs), "shared": false,
		"router:external": n.External, "port_security_enabled": true, "description": ""}
}

func (s *subnet) render() map[string]any {
	pools := []map[string]string{}
	for _, p := range s.Pools {
		pools = append(pools, map[string]string{"start": p[0].String(), "end": p[1].String()})
	}
	return map[string]any{"id": s.ID, "name": s.Name, "tenant_id": s.ProjectID, "project_id": s.ProjectID,
		"network_id": s.NetworkID, "ip_version": 4, "cidr": s.CIDR.String(), "gateway_ip": s.Gateway.String(),
		"allocation_pools": pools, "dns_nameservers": nonNil(s.DNS), "enable_dhcp": s.EnableDHCP,
		"host_routes": []any{}, "description": ""}
}

func (p *port) render() map[string]any {
	return map[string]any{"id": p.ID, "name": p.Name, "tenant_id": p.ProjectID, "project_id": p.ProjectID,
		"network_id": p.NetworkID, "device_id": p.DeviceID, "device_owner": p.DeviceOwner, "fixed_ips": nonNil(p.FixedIPs),
		"admin_state_up": true, "status": "ACTIVE", "mac_address": "fa:16:3e:" + p.ID[0:2] + ":" + p.ID[2:4] + ":" + p.ID[4:6],
		"security_groups": nonNil(p.SecurityGroups), "description": p.Description}
}

func (f *floatingIP) render() map[string]any {
	m := map[string]any{"id": f.ID, "floating_ip_address": f.Address, "floating_network_id": f.NetworkID,
		"tenant_id": f.ProjectID, "project_id": f.ProjectID, "router_id": nil, "port_id": nil,
		"fixed_ip_address": nil, "status": "DOWN", "description": f.Description}
	if f.PortID != "" {
		m["port_id"], m["fixed_ip_address"], m["status"] = f.PortID, f.FixedIP, "ACTIVE"
	}
	return m
}

// list answers a Neutron collection GET, filtering on every query parameter by the rendered
// field's value.
func (c *call) list(collection string, items []map[string]any) {
	out := []map[string]any{}
	q := c.r.URL.Query()
	for _, it := range items {
		keep := true
		for k := range q {
			if fmt.Sprint(it[k]) != q.Get(k) {
				keep = false
			}
		}
		if keep {
			out = append(out, it)
		}
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]["id"]) < fmt.Sprint(out[j]["id"]) })
	c.reply(http.StatusOK, map[string]any{collection: out})
}

// owner picks the project of a new object: project_id, tenant_id, else the token's project.
func (c *call) owner(m map[string]json.RawMessage) (string, bool) {
	var p, t string
	if !c.fields(m, map[string]any{"project_id": &p, "tenant_id": &t}) {
		return "", false
	}
	if p != "" && t != "" && p != t {
		c.fail(http.StatusBadRequest, "project_id and tenant_id do not match")
		return "", false
	}
	if p == "" {
		p = t
	}
	if p == "" {
		p = c.tok.projectID
	}
	return p, true
}

func (c *call) overQuota(kind, projectID string) bool {
	if c.s.st.overQuota(kind, projectID) {
		c.fail(http.StatusConflict, fmt.Sprintf("Quota exceeded for resources: ['%s'].", kind))
		return true
	}
	return false
}

// neutronVersions serves the unauthenticated version document clients discover the API with.
func (c *call) neutronVersions() {
	c.reply(http.StatusOK, map[string]any{"versions": []map[string]any{{"id": "v2.0", "status": "CURRENT",
		"links": []map[string]string{{"rel": "self", "href": "http://" + c.r.Host + "/network/v2.0/"}}}}})
}

func (c *call) listNetworks() {
	var items []map[string]any
	for _, n := range c.s.st.networks {
		items = append(items, n.render(c.s.st))
	}
	c.list("networks", items)
}

func (c *call) getNetwork() {
	n := c.s.st.networks[c.param(0)]
	if n == nil {
		c.fail(http.StatusNotFound, "Network "+c.param(0)+" could not be found.")
		return
	}
	c.reply(http.StatusOK, map[string]any{"network": n.render(c.s.st)})
}

func (c *call) createNetwork() {
	m, ok := c.object("network", "name", "project_id", "tenant_id", "admin_state_up", "description")
	if !ok {
		return
	}
	var name string
	project, ok := c.owner(m)
	if !ok || !c.fields(m, map[string]any{"name": &name, "admin_state_up": new(bool), "description": new(string)}) {
		return
	}
	c.s.st.ensureDefaultGroup(project)
	if c.overQuota("network", project) {
		return
	}
	n := &network{ID: newID(true), Name: name, ProjectID: project}
	c.s.st.networks[n.ID] = n
	c.reply(http.StatusCreated, map[string]any{"network": n.render(c.s.st)})
}

func (c *call) deleteNetwork() {
	st := c.s.st
	n := st.networks[c.param(0)]
	if n == nil {
		c.fail(http.StatusNotFound, "Network "+c.param(0)+" could not be found.")
		return
	}
	for _, p := range st.ports {
		if p.NetworkID == n.ID && p.DeviceOwner != "network:dhcp" {
			c.fail(http.StatusConflict, fmt.Sprintf("Unable to complete operation on network %s. There are one or more ports still in use on the network.", n.ID))
			return
		}
	}
	for id, s := range st.subnets {
		if s.NetworkID == n.ID {
			delete(st.subnets, id)
		}
	}
	delete(st.networks, n.ID)
	c.noContent(http.StatusNoContent)
}

type poolBody struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

func (c *call) createSubnet() {
	m, ok := c.object("subnet", "network_id", "cidr", "name", "project_id", "tenant_id", "ip_version",
		"allocation_pools", "dns_nameservers", "gateway_ip", "enable_dhcp", "description")
	if !ok {
		return
	}
	var netID, cidr, name, gw string
	var version int
	var pools []poolBody
	var dns []string
	dhcp := true
	project, ok := c.owner(m)
	if !ok || !c.fields(m, map[string]any{"network_id": &netID, "cidr": &cidr, "name": &name, "ip_version": &version,
		"allocation_pools": &pools, "dns_nameservers": &dns, "gateway_ip": &gw, "enable_dhcp": &dhcp, "description": new(string)}) {
		return
	}
	st := c.s.st
	n := st.networks[netID]
	if n == nil {
		c.fail(http.StatusNotFound, "Network "+netID+" could not be found.")
		return
	}
	sn, msg := st.newSubnet(n, name, project, cidr, version, gw, pools, dns)
	if msg != "" {
		c.fail(http.StatusBadRequest, msg)
		return
	}
	if c.overQuota("subnet", project) {
		return
	}
	sn.EnableDHCP = dhcp
	st.subnets[sn.ID] = sn
	c.reply(http.StatusCreated, map[string]any{"subnet": sn.render()})
}

// newSubnet validates a subnet the way Neutron does and returns it, or a message.
func (st *state) newSubnet(n *network, name, project, cidr string, version int, gw string, pools []poolBody, dns []string) (*subnet, string) {
	prefix, err := netip.ParsePrefix(cidr)
	switch {
	case err != nil || prefix.Masked() != prefix:
		return nil, fmt.Sprintf("Invalid input for cidr. Reason: '%s' is not a valid IP subnet.", cidr)
	case version != 4 || !prefix.Addr().Is4():
		return nil, "Invalid input: the simulator supports ip_version 4 with an IPv4 cidr"
	}
	for _, other := range st.subnets {
		if other.NetworkID == n.ID && other.CIDR.Overlaps(prefix) {
			return nil, fmt.Sprintf("Invalid input for operation: Requested subnet with cidr: %s for network: %s overlaps with another subnet.", cidr, n.ID)
		}
	}
	sn := &subnet{ID: newID(true), Name: name, ProjectID: project, NetworkID: n.ID, CIDR: prefix, Gateway: prefix.Addr().Next()}
	if gw != "" {
		if sn.Gateway, err = netip.ParseAddr(gw); err != nil || !prefix.Contains(sn.Gateway) {
			return nil, "Invalid input for gateway_ip: " + gw
		}
	}
	for _, p := range pools {
		start, err1 := netip.ParseAddr(p.Start)
		end, err2 := netip.ParseAddr(p.End)
		if err1 != nil || err2 != nil || !prefix.Contains(start) || !prefix.Contains(end) || end.Less(start) {
			return nil, fmt.Sprintf("Invalid input for allocation_pools: %s-%s is not a valid pool of %s", p.Start, p.End, cidr)
		}
		if !sn.Gateway.Less(start) && !end.Less(sn.Gateway) {
			return nil, fmt.Sprintf("Gateway ip %s conflicts with allocation pool %s-%s", sn.Gateway, p.Start, p.End)
		}
		sn.Pools = append(sn.Pools, [2]netip.Addr{start, end})
	}
	if len(pools) == 0 {
		sn.Pools = [][2]netip.Addr{{sn.Gateway.Next(), lastHost(prefix)}}
	}
	for _, d := range dns {
		if _, err := netip.ParseAddr(d); err != nil {
			return nil, "Invalid input for dns_nameservers: " + d
		}
	}
	sn.DNS = dns
	return sn, ""
}

func lastHost(p netip.Prefix) netip.Addr {
	a := p.Addr().As4()
	bits := 32 - p.Bits()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v |= (1 << bits) - 1
	v-- // broadcast
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// allocate hands out the next free address of a subnet's first pool.
func (st *state) allocate(sn *subnet) (netip.Addr, bool) {
	if !sn.next.IsValid() {
		sn.next = sn.Pools[0][0]
	}
	if sn.Pools[0][1].Less(sn.next) {
		return netip.Addr{}, false
	}
	a := sn.next
	sn.next = a.Next()
	return a, true
}

func (c *call) listSubnets() {
	var items []map[string]any
	for _, s := range c.s.st.subnets {
		items = append(items, s.render())
	}
	c.list("subnets", items)
}

func (c *call) deleteSubnet() {
	st := c.s.st
	sn := st.subnets[c.param(0)]
	if sn == nil {
		c.fail(http.StatusNotFound, "Subnet "+c.param(0)+" could not be found.")
		return
	}
	for _, p := range st.ports {
		for _, ip := range p.FixedIPs {
			if ip.SubnetID == sn.ID && p.DeviceOwner != "network:dhcp" {
				c.fail(http.StatusConflict, fmt.Sprintf("Unable to complete operation on subnet %s: One or more ports have an IP allocation from this subnet.", sn.ID))
				return
			}
		}
	}
	delete(st.subnets, sn.ID)
	c.noContent(http.StatusNoContent)
}

func (c *call) listPorts() {
	var items []map[string]any
	for _, p := range c.s.st.ports {
		items = append(items, p.render())
	}
	c.list("ports", items)
}

func (c *call) deletePort() {
	p := c.s.st.ports[c.param(0)]
	switch {
	case p == nil:
		c.fail(http.StatusNotFound, "Port "+c.param(0)+" could not be found.")
	case p.DeviceOwner == "network:router_interface" || p.DeviceOwner == "network:router_gateway":
		c.fail(http.StatusConflict, fmt.Sprintf("Port %s cannot be deleted directly via the port API: has device owner %s.", p.ID, p.DeviceOwner))
	default:
		delete(c.s.st.ports, p.ID)
		c.noContent(http.StatusNoContent)
	}
}

func (c *call) createFloatingIP() {
	m, ok := c.object("floatingip", "floating_network_id", "project_id", "tenant_id", "description", "port_id")
	if !ok {
		return
	}
	var netID, desc, portID string
	project, ok := c.owner(m)
	if !ok || !c.fields(m, map[string]any{"floating_network_id": &netID, "description": &desc, "port_id": &portID}) {
		return
	}
	st := c.s.st
	addr, msg := st.externalAddress(netID)
	if msg != "" {
		c.fail(http.StatusBadRequest, msg)
		return
	}
	var fixed string
	if portID != "" {
		var code int
		if fixed, code, msg = st.reachable(portID, netID); msg != "" {
			c.fail(code, msg)
			return
		}
	}
	if c.overQuota("floatingip", project) {
		return
	}
	f := &floatingIP{ID: newID(true), ProjectID: project, NetworkID: netID, Address: addr.String(), PortID: portID,
		FixedIP: fixed, Description: desc}
	st.floatingIP[f.ID] = f
	c.reply(http.StatusCreated, map[string]any{"floatingip": f.render()})
}

// externalAddress allocates an address on an external network.
func (st *state) externalAddress(netID string) (netip.Addr, string) {
	n := st.networks[netID]
	if n == nil || !n.External {
		return netip.Addr{}, fmt.Sprintf("Network %s is not a valid external network", netID)
	}
	for _, sn := range st.subnets {
		if sn.NetworkID == netID {
			if a, ok := st.allocate(sn); ok {
				return a, ""
			}
		}
	}
	return netip.Addr{}, fmt.Sprintf("No more IP addresses available on network %s.", netID)
}

func (c *call) listFloatingIPs() {
	var items []map[string]any
	for _, f := range c.s.st.floatingIP {
		items = append(items, f.render())
	}
	c.list("floatingips", items)
}

func (c *call) deleteFloatingIP() {
	if c.s.st.floatingIP[c.param(0)] == nil {
		c.fail(http.StatusNotFound, "Floating IP "+c.param(0)+" could not be found.")
		return
	}
	delete(c.s.st.floatingIP, c.param(0))
	c.noContent(http.StatusNoContent)
}
