package openstacksim

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
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

// AttachVolume attaches a volume to a server: Cinder refuses to delete it, even forced, until
// the server is gone.
func (s *Server) AttachVolume(volumeID, serverID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.st.volumes[volumeID]; v != nil {
		v.AttachedTo = serverID
	}
}

// AddServerGroup puts a Nova server group (anti-affinity) into a project.
func (s *Server) AddServerGroup(projectID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := &serverGroup{ID: newID(true), Name: "group-" + newID(false)[:6], ProjectID: projectID, UserID: newID(false), Policy: "anti-affinity"}
	s.st.svGroups[g.ID] = g
	return g.ID
}

func allTenants(c *call) bool {
	v := c.query("all_tenants")
	return v == "true" || v == "1" || v == "True"
}

func (c *call) deleteServer() {
	v := c.s.st.servers[c.param(0)]
	if v == nil {
		c.fail(http.StatusNotFound, "Instance "+c.param(0)+" could not be found.")
		return
	}
	switch {
	case c.s.opts.DeleteDelay > 0:
		if !v.deleting {
			v.deleting, v.goneAt = true, time.Now().Add(c.s.opts.DeleteDelay)
		}
	case c.s.asyncDeletes:
		v.deleting = true
	default:
		c.s.st.removeServer(v.ID)
	}
	c.noContent(http.StatusNoContent)
}

// novaMicroversion is the compute microversion a request asks for (2.1 when none).
func novaMicroversion(r *http.Request) (major, minor int) {
	v := r.Header.Get("X-OpenStack-Nova-API-Version")
	if h := r.Header.Get("OpenStack-API-Version"); strings.HasPrefix(h, "compute ") {
		v = strings.TrimPrefix(h, "compute ")
	}
	if a, b, ok := strings.Cut(strings.TrimSpace(v), "."); ok {
		major, _ = strconv.Atoi(a)
		minor, _ = strconv.Atoi(b)
		return major, minor
	}
	return 2, 1
}

// listServerGroups serves GET /os-server-groups: the token's project, or every project with
// all_projects (admin). Like Nova, project_id and user_id appear from microversion 2.13, and
// 2.64 replaces policies with policy and rules.
func (c *call) listServerGroups() {
	all := c.query("all_projects")
	everyProject := all == "True" || all == "true" || all == "1"
	major, minor := novaMicroversion(c.r)
	out := []map[string]any{}
	for _, g := range c.s.st.svGroups {
		if !everyProject && g.ProjectID != c.tok.projectID {
			continue
		}
		m := map[string]any{"id": g.ID, "name": g.Name, "members": []string{}, "metadata": map[string]string{}}
		if major == 2 && minor >= 13 {
			m["project_id"], m["user_id"] = g.ProjectID, g.UserID
		}
		if major == 2 && minor >= 64 {
			m["policy"], m["rules"] = g.Policy, map[string]any{}
			delete(m, "metadata")
		} else {
			m["policies"] = []string{g.Policy}
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["id"].(string) < out[j]["id"].(string) })
	c.reply(http.StatusOK, map[string]any{"server_groups": out})
}

func (c *call) deleteServerGroup() {
	if c.s.st.svGroups[c.param(0)] == nil {
		c.fail(http.StatusNotFound, "Server group "+c.param(0)+" could not be found.")
		return
	}
	delete(c.s.st.svGroups, c.param(0))
	c.noContent(http.StatusNoContent)
}

func (c *call) listVolumes() {
	if !c.cinderProjectOK() {
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
			status, attachments := v.state()
			out = append(out, v.render(status, attachments))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["id"].(string) < out[j]["id"].(string) })
	c.reply(http.StatusOK, map[string]any{"volumes": out})
}

func (v *volume) state() (string, []any) {
	status, attachments := "available", []any{}
	if v.AttachedTo != "" {
		status = "in-use"
		attachments = append(attachments, map[string]any{"server_id": v.AttachedTo, "volume_id": v.ID, "device": "/dev/vdb"})
	}
	if v.deleting {
		status = "deleting"
	}
	return status, attachments
}

func (v *volume) render(status string, attachments []any) map[string]any {
	typ, boot := v.Type, "false"
	if typ == "" {
		typ = "__DEFAULT__"
	}
	if v.Bootable {
		boot = "true"
	}
	return map[string]any{"id": v.ID, "name": v.Name, "size": v.Size, "status": status,
		"os-vol-tenant-attr:tenant_id": v.ProjectID, "attachments": attachments, "metadata": map[string]string{},
		"volume_type": typ, "bootable": boot, "multiattach": false}
}

func (c *call) getVolume() {
	if !c.cinderProjectOK() {
		return
	}
	v := c.s.st.volumes[c.param(1)]
	if v == nil {
		c.fail(http.StatusNotFound, "Volume "+c.param(1)+" could not be found.")
		return
	}
	status, attachments := v.state()
	c.reply(http.StatusOK, map[string]any{"volume": v.render(status, attachments)})
}

// cinderProjectOK checks that the URL's project is the token's, as Cinder does.
func (c *call) cinderProjectOK() bool {
	if c.param(0) != c.tok.projectID {
		c.fail(http.StatusBadRequest, "Malformed request url: project id does not match the token")
		return false
	}
	return true
}

// forceDeleteOnly checks that an action body is exactly {"os-force_delete": {}}.
func (c *call) forceDeleteOnly() bool {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(c.body, &m); err != nil || len(m) != 1 || m["os-force_delete"] == nil {
		c.fail(http.StatusBadRequest, "the simulator supports the os-force_delete action only")
		return false
	}
	return true
}

// volumeAction serves os-force_delete. Like Cinder, even a forced delete is refused while the
// volume is attached or has snapshots.
func (c *call) volumeAction() {
	if !c.cinderProjectOK() || !c.forceDeleteOnly() {
		return
	}
	v := c.s.st.volumes[c.param(1)]
	if v == nil {
		c.fail(http.StatusNotFound, "Volume "+c.param(1)+" could not be found.")
		return
	}
	if v.AttachedTo != "" || c.s.st.hasSnapshots(v.ID) {
		c.fail(http.StatusBadRequest, "Invalid volume: Volume status must be available or error or error_restoring or "+
			"error_extending or error_managing and must not be migrating, attached, belong to a group, have snapshots, "+
			"awaiting a transfer, or be disassociated from snapshots after volume transfer.")
		return
	}
	if c.s.asyncDeletes {
		v.deleting = true
	} else {
		delete(c.s.st.volumes, v.ID)
	}
	c.noContent(http.StatusAccepted)
}
