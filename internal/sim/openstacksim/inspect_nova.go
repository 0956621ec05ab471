package openstacksim

import (
	"sort"
	"time"
)

// Test helpers for booted servers, their volumes, floating IPs and key pairs.

// ServerInfo is a server as a test sees it, with its user data decoded.
type ServerInfo struct {
	ID, Name, ProjectID, Status, FlavorID, KeyName string
	Deleting                                       bool // task state "deleting" (DeleteDelay, SetAsyncDeletes)
	UserData                                       string
	Metadata                                       map[string]string
	Tags, SecurityGroups                           []string
	Ports                                          []string // port ids, in network order
	FixedIPs                                       []string // the ports' fixed IPs, in the same order
	Volumes                                        []VolumeInfo
	Created                                        time.Time
}

// VolumeInfo is a Cinder volume as a test sees it.
type VolumeInfo struct {
	ID, ProjectID, Type, ImageID, AttachedTo string
	SizeGB                                   int
	Bootable, DeleteOnTermination            bool
}

// FloatingIPInfo is a floating IP as a test sees it.
type FloatingIPInfo struct {
	ID, ProjectID, Address, PortID, FixedIP, Description string
}

func (v *volume) info() VolumeInfo {
	return VolumeInfo{ID: v.ID, ProjectID: v.ProjectID, Type: v.Type, ImageID: v.ImageID, AttachedTo: v.AttachedTo,
		SizeGB: v.Size, Bootable: v.Bootable, DeleteOnTermination: v.deleteOnTermination}
}

// Servers lists every server (booted or added), sorted by name then id.
func (s *Server) Servers() []ServerInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	s.st.settle(now)
	var out []ServerInfo
	for _, v := range s.st.servers {
		si := ServerInfo{ID: v.ID, Name: v.Name, ProjectID: v.ProjectID, Status: v.status(now), Deleting: v.deleting, FlavorID: v.FlavorID,
			KeyName: v.KeyName, UserData: v.UserData, Metadata: map[string]string{}, Tags: append([]string(nil), v.Tags...),
			SecurityGroups: append([]string(nil), v.SecurityGroups...), Ports: append([]string(nil), v.Ports...), Created: v.Created}
		for k, val := range v.Metadata {
			si.Metadata[k] = val
		}
		for _, id := range v.Ports {
			if p := s.st.ports[id]; p != nil {
				for _, ip := range p.FixedIPs {
					si.FixedIPs = append(si.FixedIPs, ip.IPAddress)
				}
			}
		}
		for _, vol := range s.st.volumes {
			if vol.AttachedTo == v.ID {
				si.Volumes = append(si.Volumes, vol.info())
			}
		}
		sort.Slice(si.Volumes, func(i, j int) bool { return si.Volumes[i].ID < si.Volumes[j].ID })
		out = append(out, si)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// SetServerStatus sets a server's Nova status (ACTIVE, ERROR, SHUTOFF, …); false when there
// is no such server.
func (s *Server) SetServerStatus(id, status string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.st.servers[id]
	if v == nil {
		return false
	}
	v.Status = status
	return true
}

// FailServers sends every server named name to ERROR, now and when one is booted later,
// until ClearFailServers.
func (s *Server) FailServers(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errorNames[name] = true
	for _, v := range s.st.servers {
		if v.Name == name {
			v.Status = "ERROR"
		}
	}
}

// ClearFailServers lets servers named name boot normally again.
func (s *Server) ClearFailServers(name string) {
	s.mu.Lock()
	delete(s.errorNames, name)
	s.mu.Unlock()
}

// Volumes lists a project's volumes ("" every project), sorted by id.
func (s *Server) Volumes(projectID string) []VolumeInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []VolumeInfo
	for _, v := range s.st.volumes {
		if projectID == "" || v.ProjectID == projectID {
			out = append(out, v.info())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// FloatingIPs lists a project's floating IPs ("" every project), sorted by id.
func (s *Server) FloatingIPs(projectID string) []FloatingIPInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []FloatingIPInfo
	for _, f := range s.st.floatingIP {
		if projectID == "" || f.ProjectID == projectID {
			out = append(out, FloatingIPInfo{ID: f.ID, ProjectID: f.ProjectID, Address: f.Address, PortID: f.PortID,
				FixedIP: f.FixedIP, Description: f.Description})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Keypairs lists key pair names of every user, sorted.
func (s *Server) Keypairs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, k := range s.st.keypairs {
		out = append(out, k.Name)
	}
	sort.Strings(out)
	return out
}

// AdminProjectID is the id of the admin project (where admin-scoped clients create objects).
func (s *Server) AdminProjectID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.st.projects {
		if p.Name == s.opts.AdminProject && p.DomainID == "default" {
			return p.ID
		}
	}
	return ""
}
