package openstacksim

import (
	"net/http"
	"sort"
	"time"
)

// Cinder snapshots and backups exist so that terminate has something to clean up or refuse:
// tests add them with AddSnapshot and AddBackup; the APIs list and force-delete them.

// AddSnapshot puts a snapshot of a volume into the volume's project (Cinder usage: 1
// snapshot, the volume's size in gigabytes).
func (s *Server) AddSnapshot(volumeID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.st.volumes[volumeID]
	if v == nil {
		return ""
	}
	sn := &snapshot{ID: newID(true), Name: "snap-" + newID(false)[:6], ProjectID: v.ProjectID, VolumeID: v.ID, Size: v.Size}
	s.st.snapshots[sn.ID] = sn
	return sn.ID
}

// AddBackup puts a backup of a volume into the volume's project; a non-empty parent makes it
// an incremental backup of that one (which then cannot be deleted before it).
func (s *Server) AddBackup(volumeID, parent string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.st.volumes[volumeID]
	if v == nil {
		return ""
	}
	b := &backup{ID: newID(true), Name: "backup-" + newID(false)[:6], ProjectID: v.ProjectID, VolumeID: v.ID, ParentID: parent, Size: v.Size}
	s.st.backups[b.ID] = b
	return b.ID
}

func (st *state) hasSnapshots(volumeID string) bool {
	for _, sn := range st.snapshots {
		if sn.VolumeID == volumeID {
			return true
		}
	}
	return false
}

func (st *state) hasChildren(backupID string) bool {
	for _, b := range st.backups {
		if b.ParentID == backupID {
			return true
		}
	}
	return false
}

const cinderTime = "2006-01-02T15:04:05.000000"

// cinderListProject checks a detail list's path and filters like listVolumes and returns the
// project asked for.
func (c *call) cinderListProject(kind string) (string, bool) {
	if !c.cinderProjectOK() {
		return "", false
	}
	project := c.query("project_id")
	if !allTenants(c) || project == "" {
		c.fail(http.StatusBadRequest, "the simulator lists "+kind+" with all_tenants and project_id only")
		return "", false
	}
	return project, true
}

func (c *call) listSnapshots() {
	project, ok := c.cinderListProject("snapshots")
	if !ok {
		return
	}
	now := time.Now().UTC().Format(cinderTime)
	out := []map[string]any{}
	for _, sn := range c.s.st.snapshots {
		if sn.ProjectID != project {
			continue
		}
		status := "available"
		if sn.deleting {
			status = "deleting"
		}
		out = append(out, map[string]any{"id": sn.ID, "name": sn.Name, "status": status, "size": sn.Size, "volume_id": sn.VolumeID,
			"description": nil, "metadata": map[string]string{}, "created_at": now, "updated_at": now,
			"os-extended-snapshot-attributes:project_id": sn.ProjectID, "os-extended-snapshot-attributes:progress": "100%"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["id"].(string) < out[j]["id"].(string) })
	c.reply(http.StatusOK, map[string]any{"snapshots": out})
}

func (c *call) snapshotAction() {
	if !c.cinderProjectOK() || !c.forceDeleteOnly() {
		return
	}
	sn := c.s.st.snapshots[c.param(1)]
	if sn == nil {
		c.fail(http.StatusNotFound, "Snapshot "+c.param(1)+" could not be found.")
		return
	}
	if c.s.asyncDeletes {
		sn.deleting = true
	} else {
		delete(c.s.st.snapshots, sn.ID)
	}
	c.noContent(http.StatusAccepted)
}

func (c *call) listBackups() {
	project, ok := c.cinderListProject("backups")
	if !ok {
		return
	}
	now := time.Now().UTC().Format(cinderTime)
	out := []map[string]any{}
	for _, b := range c.s.st.backups {
		if b.ProjectID != project {
			continue
		}
		status := "available"
		if b.deleting {
			status = "deleting"
		}
		out = append(out, map[string]any{"id": b.ID, "name": b.Name, "status": status, "size": b.Size, "volume_id": b.VolumeID,
			"description": nil, "created_at": now, "updated_at": now, "data_timestamp": now, "is_incremental": b.ParentID != "",
			"has_dependent_backups": c.s.st.hasChildren(b.ID), "container": "backups", "object_count": 1, "fail_reason": nil,
			"snapshot_id": nil, "availability_zone": "nova", "os-backup-project-attr:project_id": b.ProjectID})
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["id"].(string) < out[j]["id"].(string) })
	c.reply(http.StatusOK, map[string]any{"backups": out})
}

// backupAction serves os-force_delete. Like Cinder, a backup with incremental backups based on
// it is refused, and one already being deleted too.
func (c *call) backupAction() {
	if !c.cinderProjectOK() || !c.forceDeleteOnly() {
		return
	}
	b := c.s.st.backups[c.param(1)]
	switch {
	case b == nil:
		c.fail(http.StatusNotFound, "Backup "+c.param(1)+" could not be found.")
		return
	case c.s.st.hasChildren(b.ID):
		c.fail(http.StatusBadRequest, "Invalid backup: Incremental backups exist for this backup.")
		return
	case b.deleting:
		c.fail(http.StatusBadRequest, "Invalid backup: Backup status must be available or error or error_deleting.")
		return
	}
	if c.s.asyncDeletes {
		b.deleting = true
	} else {
		delete(c.s.st.backups, b.ID)
	}
	c.noContent(http.StatusAccepted)
}
