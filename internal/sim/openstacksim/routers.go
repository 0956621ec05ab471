package openstacksim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

func (r *router) render(st *state) map[string]any {
	var gw any
	if r.GatewayNet != "" {
		ips := []fixedIP{}
		if p := st.ports[r.gatewayPort]; p != nil {
			ips = p.FixedIPs
		}
		gw = map[string]any{"network_id": r.GatewayNet, "enable_snat": true, "external_fixed_ips": ips}
	}
	return map[string]any{"id": r.ID, "name": r.Name, "tenant_id": r.ProjectID, "project_id": r.ProjectID,
		"admin_state_up": true, "status": "ACTIVE", "external_gateway_info": gw, "routes": []any{}, "description": ""}
}

type gatewayBody struct {
	NetworkID        string    `json:"network_id"`
	EnableSNAT       *bool     `json:"enable_snat,omitempty"`
	ExternalFixedIPs []fixedIP `json:"external_fixed_ips,omitempty"`
}

func (c *call) createRouter() {
	m, ok := c.object("router", "name", "project_id", "tenant_id", "admin_state_up", "description", "external_gateway_info")
	if !ok {
		return
	}
	var name string
	var gw *gatewayBody
	project, ok := c.owner(m)
	if !ok || !c.fields(m, map[string]any{"name": &name, "admin_state_up": new(bool), "description": new(string), "external_gateway_info": &gw}) {
		return
	}
	if c.overQuota("router", project) {
		return
	}
	r := &router{ID: newID(true), Name: name, ProjectID: project}
	if gw != nil && !c.setGateway(r, gw.NetworkID) {
		return
	}
	c.s.st.routers[r.ID] = r
	c.reply(http.StatusCreated, map[string]any{"router": r.render(c.s.st)})
}

// setGateway (re)connects a router to an external network ("" disconnects it).
func (c *call) setGateway(r *router, netID string) bool {
	st := c.s.st
	if r.GatewayNet == netID {
		return true
	}
	var port *port
	if netID != "" {
		addr, msg := st.externalAddress(netID)
		if msg != "" {
			c.fail(http.StatusBadRequest, msg)
			return false
		}
		var subnetID string
		for _, sn := range st.subnets {
			if sn.NetworkID == netID && sn.CIDR.Contains(addr) {
				subnetID = sn.ID
			}
		}
		port = st.addPort(r.ID, "", netID, "network:router_gateway", fixedIP{SubnetID: subnetID, IPAddress: addr.String()})
	}
	delete(st.ports, r.gatewayPort)
	r.GatewayNet, r.gatewayPort = netID, ""
	if port != nil {
		r.gatewayPort = port.ID
	}
	return true
}

func (st *state) addPort(deviceID, project, netID, owner string, ip fixedIP) *port {
	p := &port{ID: newID(true), ProjectID: project, NetworkID: netID, DeviceID: deviceID, DeviceOwner: owner, FixedIPs: []fixedIP{ip}}
	st.ports[p.ID] = p
	return p
}

func (c *call) router() *router {
	r := c.s.st.routers[c.param(0)]
	if r == nil {
		c.fail(http.StatusNotFound, "Router "+c.param(0)+" could not be found")
	}
	return r
}

func (c *call) updateRouter() {
	r := c.router()
	if r == nil {
		return
	}
	m, ok := c.object("router", "name", "admin_state_up", "description", "external_gateway_info")
	if !ok {
		return
	}
	var gw *gatewayBody
	name := r.Name
	if !c.fields(m, map[string]any{"name": &name, "admin_state_up": new(bool), "description": new(string), "external_gateway_info": &gw}) {
		return
	}
	r.Name = name
	if _, has := m["external_gateway_info"]; has {
		netID := ""
		if gw != nil {
			netID = gw.NetworkID
		}
		if !c.setGateway(r, netID) {
			return
		}
	}
	c.reply(http.StatusOK, map[string]any{"router": r.render(c.s.st)})
}

func (c *call) listRouters() {
	var items []map[string]any
	for _, r := range c.s.st.routers {
		items = append(items, r.render(c.s.st))
	}
	c.list("routers", items)
}

func (c *call) deleteRouter() {
	st := c.s.st
	r := c.router()
	if r == nil {
		return
	}
	for _, p := range st.ports {
		if p.DeviceID == r.ID && p.DeviceOwner == "network:router_interface" {
			c.fail(http.StatusConflict, fmt.Sprintf("Router %s still has ports", r.ID))
			return
		}
	}
	delete(st.ports, r.gatewayPort)
	delete(st.routers, r.ID)
	c.noContent(http.StatusNoContent)
}

// interfaceBody decodes {"subnet_id": …} or {"port_id": …} (exactly one).
func (c *call) interfaceBody() (subnetID, portID string, ok bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(c.body, &m); err != nil {
		c.fail(http.StatusBadRequest, "malformed JSON body")
		return "", "", false
	}
	if bad := unknownKeys(m, []string{"subnet_id", "port_id"}); len(bad) > 0 {
		c.fail(http.StatusBadRequest, fmt.Sprintf("Unrecognized attribute(s) '%v'", bad))
		return "", "", false
	}
	if !c.fields(m, map[string]any{"subnet_id": &subnetID, "port_id": &portID}) {
		return "", "", false
	}
	if (subnetID == "") == (portID == "") {
		c.fail(http.StatusBadRequest, "Bad router request: Either subnet_id or port_id must be specified.")
		return "", "", false
	}
	return subnetID, portID, true
}

func interfaceReply(r *router, p *port) map[string]any {
	return map[string]any{"id": r.ID, "tenant_id": r.ProjectID, "project_id": r.ProjectID, "port_id": p.ID,
		"network_id": p.NetworkID, "subnet_id": p.FixedIPs[0].SubnetID, "subnet_ids": []string{p.FixedIPs[0].SubnetID}}
}

func (c *call) addInterface() {
	st := c.s.st
	r := c.router()
	if r == nil {
		return
	}
	subnetID, portID, ok := c.interfaceBody()
	if !ok {
		return
	}
	if portID != "" {
		c.fail(http.StatusBadRequest, "the simulator attaches interfaces by subnet_id only")
		return
	}
	sn := st.subnets[subnetID]
	if sn == nil {
		c.fail(http.StatusNotFound, "Subnet "+subnetID+" could not be found.")
		return
	}
	for _, p := range st.ports {
		if p.DeviceID == r.ID && p.FixedIPs[0].SubnetID == subnetID {
			c.fail(http.StatusBadRequest, fmt.Sprintf("Bad router request: Router %s already has a port on subnet %s.", r.ID, subnetID))
			return
		}
	}
	if c.overQuota("port", r.ProjectID) {
		return
	}
	p := st.addPort(r.ID, r.ProjectID, sn.NetworkID, "network:router_interface", fixedIP{SubnetID: sn.ID, IPAddress: sn.Gateway.String()})
	c.reply(http.StatusOK, interfaceReply(r, p))
}

func (c *call) removeInterface() {
	st := c.s.st
	r := c.router()
	if r == nil {
		return
	}
	subnetID, portID, ok := c.interfaceBody()
	if !ok {
		return
	}
	for _, p := range st.ports {
		if p.DeviceID != r.ID || p.DeviceOwner != "network:router_interface" {
			continue
		}
		if p.ID == portID || p.FixedIPs[0].SubnetID == subnetID {
			delete(st.ports, p.ID)
			c.reply(http.StatusOK, interfaceReply(r, p))
			return
		}
	}
	c.fail(http.StatusNotFound, fmt.Sprintf("Router %s does not have an interface with id %s", r.ID, subnetID+portID))
}
