package openstacksim

import (
	"net/http"
	"strings"
)

// Neutron port creation (ports a client makes before booting a server on them) and the
// reachability check of floating IP association.

func (c *call) createPort() {
	m, ok := c.object("port", "name", "network_id", "project_id", "tenant_id", "fixed_ips", "security_groups",
		"description", "admin_state_up")
	if !ok {
		return
	}
	var name, netID, desc string
	var groups []string
	var fixed []struct {
		SubnetID  string `json:"subnet_id"`
		IPAddress string `json:"ip_address"`
	}
	project, ok := c.owner(m)
	if !ok || !c.fields(m, map[string]any{"name": &name, "network_id": &netID, "fixed_ips": &fixed,
		"security_groups": &groups, "description": &desc, "admin_state_up": new(bool)}) {
		return
	}
	st := c.s.st
	n := st.networks[netID]
	if n == nil {
		c.fail(http.StatusNotFound, "Network "+netID+" could not be found.")
		return
	}
	if len(fixed) > 1 || len(fixed) == 1 && fixed[0].IPAddress != "" {
		c.fail(http.StatusBadRequest, "the simulator allocates one address, optionally on a given subnet_id")
		return
	}
	sn := st.firstSubnet(netID)
	if len(fixed) == 1 {
		sn = st.subnets[fixed[0].SubnetID]
		if sn == nil || sn.NetworkID != netID {
			c.fail(http.StatusBadRequest, "Invalid input for fixed_ips: subnet "+fixed[0].SubnetID+" is not on network "+netID)
			return
		}
	}
	for _, g := range groups {
		if sg := st.groups[g]; sg == nil || sg.ProjectID != project {
			c.fail(http.StatusNotFound, "Security group "+g+" does not exist")
			return
		}
	}
	if c.overQuota("port", project) {
		return
	}
	var ips []fixedIP
	if sn != nil {
		addr, ok := st.allocate(sn)
		if !ok {
			c.fail(http.StatusConflict, "No more IP addresses available on network "+netID+".")
			return
		}
		ips = append(ips, fixedIP{SubnetID: sn.ID, IPAddress: addr.String()})
	}
	p := &port{ID: newID(true), Name: name, ProjectID: project, NetworkID: netID, FixedIPs: ips,
		SecurityGroups: groups, Description: desc}
	if groups == nil {
		st.ensureDefaultGroup(project)
		p.SecurityGroups = []string{st.groupByNameOrID(project, "default").ID}
	}
	st.ports[p.ID] = p
	c.reply(http.StatusCreated, map[string]any{"port": p.render()})
}

// reachable checks that a port's subnet is routed to the external network (a router with a
// gateway on it and an interface on the subnet), as Neutron does before associating a
// floating IP; it returns the port's fixed address.
func (st *state) reachable(portID, extNet string) (string, int, string) {
	p := st.ports[portID]
	if p == nil {
		return "", http.StatusNotFound, "Port " + portID + " could not be found."
	}
	if len(p.FixedIPs) == 0 {
		return "", http.StatusBadRequest, "Port " + portID + " does not have any fixed IP addresses."
	}
	for _, f := range st.floatingIP {
		if f.PortID == portID {
			return "", http.StatusConflict, "Cannot associate floating IP with port " + portID + ": it already has a floating IP " + f.Address + "."
		}
	}
	subnetID := p.FixedIPs[0].SubnetID
	for _, r := range st.routers {
		if r.GatewayNet != extNet {
			continue
		}
		for _, ip := range st.ports {
			if ip.DeviceID == r.ID && ip.DeviceOwner == "network:router_interface" && len(ip.FixedIPs) > 0 && ip.FixedIPs[0].SubnetID == subnetID {
				return p.FixedIPs[0].IPAddress, 0, ""
			}
		}
	}
	return "", http.StatusNotFound, "External network " + extNet + " is not reachable from subnet " + subnetID + ".  Therefore, cannot associate Port " + portID + " with a Floating IP."
}

// AddPort puts a port on a network, in the network's project, as someone other than the agent
// would (deviceOwner "compute:nova" with a server's id, "Octavia" with "lb-<id>", or "" for a
// bare port); it returns the port's id ("" when there is no such network).
func (s *Server) AddPort(networkID, name, deviceID, deviceOwner string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.st.networks[networkID]
	if n == nil {
		return ""
	}
	p := s.st.addPort(deviceID, n.ProjectID, networkID, deviceOwner, fixedIP{})
	p.Name = name
	if v := s.st.servers[deviceID]; v != nil && strings.HasPrefix(deviceOwner, "compute:") {
		// a port Nova made for the server: deleted with it
		v.Ports = append(v.Ports, p.ID)
		v.NovaPorts = append(v.NovaPorts, p.ID)
	}
	return p.ID
}
