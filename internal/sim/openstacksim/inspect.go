package openstacksim

import "sort"

// Project is a copy of a Keystone project.
type Project struct {
	ID, Name, DomainID, Description string
	Tags                            []string
}

// ProjectByName finds a project in any domain.
func (s *Server) ProjectByName(name string) (Project, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.st.projects {
		if p.Name == name {
			return Project{ID: p.ID, Name: p.Name, DomainID: p.DomainID, Description: p.Description,
				Tags: append([]string(nil), p.Tags...)}, true
		}
	}
	return Project{}, false
}

// ProjectCount is the number of projects (the admin project included).
func (s *Server) ProjectCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.st.projects)
}

// User is a copy of a Keystone user.
type User struct {
	ID, Name, DomainID, DefaultProjectID string
}

// UserByName finds a user in any domain.
func (s *Server) UserByName(name string) (User, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.st.users {
		if u.Name == name {
			return User{ID: u.ID, Name: u.Name, DomainID: u.DomainID, DefaultProjectID: u.DefaultProjectID}, true
		}
	}
	return User{}, false
}

// Members lists the names of users with any role on a project, sorted.
func (s *Server) Members(projectID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for a := range s.st.assignments {
		if a.projectID == projectID {
			out = append(out, s.st.users[a.userID].Name)
		}
	}
	sort.Strings(out)
	return out
}

// Objects counts a project's Neutron objects and the workloads terminate cleans up or refuses.
type Objects struct {
	Networks, Subnets, Routers, Interfaces, Ports, SecurityGroups, Rules, FloatingIPs, Servers, Volumes int
	Snapshots, Backups, Images, ServerGroups, LoadBalancers                                             int
	// GroupNames are the project's security group names, sorted.
	GroupNames []string
}

// ObjectsOf counts what a project owns.
func (s *Server) ObjectsOf(projectID string) Objects {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	var o Objects
	for _, n := range st.networks {
		o.Networks += b2i(n.ProjectID == projectID)
	}
	for _, x := range st.subnets {
		o.Subnets += b2i(x.ProjectID == projectID)
	}
	for _, r := range st.routers {
		o.Routers += b2i(r.ProjectID == projectID)
	}
	for _, p := range st.ports {
		o.Ports += b2i(p.ProjectID == projectID)
		o.Interfaces += b2i(p.ProjectID == projectID && p.DeviceOwner == "network:router_interface")
	}
	for _, g := range st.groups {
		if g.ProjectID == projectID {
			o.SecurityGroups++
			o.GroupNames = append(o.GroupNames, g.Name)
		}
	}
	sort.Strings(o.GroupNames)
	for _, r := range st.rules {
		o.Rules += b2i(r.ProjectID == projectID)
	}
	for _, f := range st.floatingIP {
		o.FloatingIPs += b2i(f.ProjectID == projectID)
	}
	for _, v := range st.servers {
		o.Servers += b2i(v.ProjectID == projectID)
	}
	for _, v := range st.volumes {
		o.Volumes += b2i(v.ProjectID == projectID)
	}
	for _, v := range st.snapshots {
		o.Snapshots += b2i(v.ProjectID == projectID)
	}
	for _, v := range st.backups {
		o.Backups += b2i(v.ProjectID == projectID)
	}
	for _, v := range st.images {
		o.Images += b2i(v.Owner == projectID)
	}
	for _, v := range st.svGroups {
		o.ServerGroups += b2i(v.ProjectID == projectID)
	}
	for _, v := range st.lbs {
		o.LoadBalancers += b2i(v.ProjectID == projectID)
	}
	return o
}

// Quotas returns a project's effective limits for "nova", "cinder" or "neutron".
func (s *Server) Quotas(service, projectID string) map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.limits(service, projectID)
}

// HasQuotaOverrides reports whether a service holds quota rows for a project.
func (s *Server) HasQuotaOverrides(service, projectID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.st.quotas[service][projectID]) > 0
}

// AddFloatingIP allocates a floating IP on the external network to a project.
func (s *Server) AddFloatingIP(projectID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.st.networks {
		if n.External {
			addr, msg := s.st.externalAddress(n.ID)
			if msg != "" {
				return ""
			}
			f := &floatingIP{ID: newID(true), ProjectID: projectID, NetworkID: n.ID, Address: addr.String()}
			s.st.floatingIP[f.ID] = f
			return f.ID
		}
	}
	return ""
}

// LeftoverNeutron counts Neutron objects whose project no longer exists in Keystone.
func (s *Server) LeftoverNeutron() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	gone := func(p string) int { return b2i(p != "" && st.projects[p] == nil) }
	n := 0
	for _, x := range st.networks {
		n += gone(x.ProjectID)
	}
	for _, x := range st.subnets {
		n += gone(x.ProjectID)
	}
	for _, x := range st.routers {
		n += gone(x.ProjectID)
	}
	for _, x := range st.ports {
		n += gone(x.ProjectID)
	}
	for _, x := range st.groups {
		n += gone(x.ProjectID)
	}
	for _, x := range st.rules {
		n += gone(x.ProjectID)
	}
	for _, x := range st.floatingIP {
		n += gone(x.ProjectID)
	}
	return n
}

// SetQuota sets one quota of a project as an administrator would (-1: unlimited).
func (s *Server) SetQuota(service, projectID, key string, value int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.quotas[service][projectID] == nil {
		s.st.quotas[service][projectID] = map[string]int{}
	}
	s.st.quotas[service][projectID][key] = value
}
