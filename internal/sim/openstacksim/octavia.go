package openstacksim

import (
	"net/http"
	"sort"
)

// Octavia load balancers exist so that terminate has something to clean up or refuse: tests
// add them with AddLoadBalancer; the API lists them by project and deletes them.

// AddLoadBalancer puts an active load balancer with listeners listeners into a project (a load
// balancer with listeners is deleted only with cascade=true).
func (s *Server) AddLoadBalancer(projectID string, listeners int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	lb := &loadBalancer{ID: newID(true), Name: "lb-" + newID(false)[:6], ProjectID: projectID, Listeners: listeners}
	s.st.lbs[lb.ID] = lb
	return lb.ID
}

// octaviaVersions serves the unauthenticated version document.
func (c *call) octaviaVersions() {
	self := "http://" + c.r.Host + "/load-balancer/v2/"
	c.reply(http.StatusOK, map[string]any{"versions": []map[string]any{
		{"id": "v2.0", "status": "SUPPORTED", "updated": "2016-12-11T00:00:00Z", "links": []map[string]string{{"rel": "self", "href": self}}},
		{"id": "v2", "status": "CURRENT", "updated": "2023-03-01T00:00:00Z", "links": []map[string]string{{"rel": "self", "href": self}}}}})
}

func (c *call) listLoadBalancers() {
	project := c.query("project_id")
	out := []map[string]any{}
	for _, lb := range c.s.st.lbs {
		if project != "" && lb.ProjectID != project {
			continue
		}
		status := "ACTIVE"
		if lb.deleting {
			status = "PENDING_DELETE"
		}
		listeners := []map[string]string{}
		for i := 0; i < lb.Listeners; i++ {
			listeners = append(listeners, map[string]string{"id": newID(true)})
		}
		out = append(out, map[string]any{"id": lb.ID, "name": lb.Name, "project_id": lb.ProjectID, "tenant_id": lb.ProjectID,
			"provisioning_status": status, "operating_status": "ONLINE", "admin_state_up": true, "listeners": listeners,
			"pools": []any{}, "vip_address": "192.168.42.50", "vip_port_id": newID(true), "provider": "amphora",
			"description": "", "flavor_id": nil, "availability_zone": nil, "tags": []string{}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["id"].(string) < out[j]["id"].(string) })
	c.reply(http.StatusOK, map[string]any{"loadbalancers": out, "loadbalancers_links": []any{}})
}

// deleteLoadBalancer serves DELETE with optional cascade=true. Like Octavia, a load balancer
// with children needs cascade, and one in a PENDING_* state is immutable (409).
func (c *call) deleteLoadBalancer() {
	lb := c.s.st.lbs[c.param(0)]
	cascade := c.query("cascade")
	switch {
	case cascade != "" && cascade != "true" && cascade != "false":
		c.fail(http.StatusBadRequest, "Invalid input for field/attribute cascade. Value: '"+cascade+"'.")
	case lb == nil:
		c.fail(http.StatusNotFound, "Load Balancer "+c.param(0)+" not found.")
	case lb.deleting:
		c.fail(http.StatusConflict, "Load Balancer "+lb.ID+" is immutable and cannot be updated.")
	case lb.Listeners > 0 && cascade != "true":
		c.fail(http.StatusBadRequest, "Validation failure: Cannot delete Load Balancer "+lb.ID+" - it has children")
	default:
		if c.s.asyncDeletes {
			lb.deleting = true
		} else {
			delete(c.s.st.lbs, lb.ID)
		}
		c.noContent(http.StatusNoContent)
	}
}
