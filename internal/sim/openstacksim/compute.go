package openstacksim

import (
	"encoding/json"
	"net/http"
	"sort"
)

// Nova servers and Cinder volumes exist only so that usage moves and terminate can be refused
// or forced: tests add them with AddServer and AddVolume; the APIs list and delete them.

// AddServer puts a server into a project (Nova usage: 1 instance, vcpus cores, ram MB).
func (s *Server) AddServer(projectID string, vcpus, ramMB int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := &server{ID: newID(true), Name: "vm-" + newID(false)[:6], ProjectID: projectID, VCPUs: vcpus, RAM: ramMB}
	s.st.servers[v.ID] = v
	return v.ID
}

// AddVolume puts a volume into a project (Cinder usage: 1 volume, sizeGB gigabytes).
func (s *Server) AddVolume(projectID string, sizeGB int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := &volume{ID: newID(true), Name: "vol-" + newID(false)[:6], ProjectID: projectID, Size: sizeGB}
	s.st.volumes[v.ID] = v
	return v.ID
}

func allTenants(c *call) bool {
	v := c.query("all_tenants")
	return v == "true" || v == "1" || v == "True"
}

func (c *call) listServers() {
	project := c.query("tenant_id")
	if !allTenants(c) || project == "" {
		c.fail(http.StatusBadRequest, "the simulator lists servers with all_tenants and tenant_id only")
		return
	}
	out := []map[string]any{}
	for _, v := range c.s.st.servers {
		if v.ProjectID == project {
			out = append(out, map[string]any{"id": v.ID, "name": v.Name, "tenant_id": v.ProjectID, "user_id": "",
				"status": "ACTIVE", "metadata": map[string]string{}, "addresses": map[string]any{},
				"flavor": map[string]any{"vcpus": v.VCPUs, "ram": v.RAM}, "image": ""})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["id"].(string) < out[j]["id"].(string) })
	c.reply(http.StatusOK, map[string]any{"servers": out})
}

func (c *call) deleteServer() {
	if c.s.st.servers[c.param(0)] == nil {
		c.fail(http.StatusNotFound, "Instance "+c.param(0)+" could not be found.")
		return
	}
	delete(c.s.st.servers, c.param(0))
	c.noContent(http.StatusNoContent)
}

func (c *call) listVolumes() {
	if c.param(0) != c.tok.projectID {
		c.fail(http.StatusBadRequest, "Malformed request url: project id does not match the token")
		return
	}
	project := c.query("project_id")
	if !allTenants(c) || project == "" {
		c.fail(http.StatusBadRequest, "the simulator lists volumes with all_tenants and project_id only")
		return
	}
	out := []map[string]any{}
	for _, v := range c.s.st.volumes {
		if v.ProjectID == project {
			out = append(out, map[string]any{"id": v.ID, "name": v.Name, "size": v.Size, "status": "available",
				"os-vol-tenant-attr:tenant_id": v.ProjectID, "attachments": []any{}, "metadata": map[string]string{},
				"volume_type": "__DEFAULT__", "bootable": "false", "multiattach": false})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["id"].(string) < out[j]["id"].(string) })
	c.reply(http.StatusOK, map[string]any{"volumes": out})
}

func (c *call) volumeAction() {
	if c.param(0) != c.tok.projectID {
		c.fail(http.StatusBadRequest, "Malformed request url: project id does not match the token")
		return
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(c.body, &m); err != nil || len(m) != 1 || m["os-force_delete"] == nil {
		c.fail(http.StatusBadRequest, "the simulator supports the os-force_delete action only")
		return
	}
	if c.s.st.volumes[c.param(1)] == nil {
		c.fail(http.StatusNotFound, "Volume "+c.param(1)+" could not be found.")
		return
	}
	delete(c.s.st.volumes, c.param(1))
	c.noContent(http.StatusAccepted)
}
