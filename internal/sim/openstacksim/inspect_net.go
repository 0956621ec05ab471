package openstacksim

import (
	"sort"
	"strconv"
)

// Test helpers for Neutron subnets and security group rules, and for breaking a server's shape.

// SubnetInfo is a subnet as a test sees it.
type SubnetInfo struct {
	ID, Name, NetworkID, CIDR string
}

// Subnets lists every subnet, sorted by name then id.
func (s *Server) Subnets() []SubnetInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]SubnetInfo, 0, len(s.st.subnets))
	for _, sn := range s.st.subnets {
		out = append(out, SubnetInfo{ID: sn.ID, Name: sn.Name, NetworkID: sn.NetworkID, CIDR: sn.CIDR.String()})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// RuleInfo is a security group rule as a test sees it; Ports is "min-max" ("" for none) and
// Remote the remote IP prefix, or "group:<name>" for a remote group.
type RuleInfo struct {
	Direction, Ethertype, Protocol, Ports, Remote string
}

// Rules lists the rules of the groups called group, sorted.
func (s *Server) Rules(group string) []RuleInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []RuleInfo
	for _, r := range s.st.rules {
		g := s.st.groups[r.GroupID]
		if g == nil || g.Name != group {
			continue
		}
		ri := RuleInfo{Direction: r.Direction, Ethertype: r.Ethertype, Protocol: r.Protocol, Remote: r.RemoteIPPrefix}
		if r.PortMin != nil && r.PortMax != nil {
			ri.Ports = strconv.Itoa(*r.PortMin) + "-" + strconv.Itoa(*r.PortMax)
		}
		if rg := s.st.groups[r.RemoteGroupID]; rg != nil {
			ri.Remote = "group:" + rg.Name
		}
		out = append(out, ri)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// String is "direction ethertype protocol ports remote".
func (r RuleInfo) String() string {
	return r.Direction + " " + r.Ethertype + " " + r.Protocol + " " + r.Ports + " " + r.Remote
}

// DetachVolume detaches a volume from its server, as an operator would by hand.
func (s *Server) DetachVolume(volumeID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.st.volumes[volumeID]; v != nil {
		v.AttachedTo = ""
	}
}

// DeleteFloatingIPs deletes the floating IPs on a port, as an operator would by hand.
func (s *Server) DeleteFloatingIPs(portID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, f := range s.st.floatingIP {
		if f.PortID == portID {
			delete(s.st.floatingIP, id)
		}
	}
}

// AddRule adds an IPv4 ingress rule to the group called group (port 0: no port range), as an
// operator would by hand; false when there is no such group.
func (s *Server) AddRule(group, protocol string, port int, remote string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.st.groups {
		if g.Name != group {
			continue
		}
		r := &secRule{GroupID: g.ID, ProjectID: g.ProjectID, Direction: "ingress", Ethertype: "IPv4", Protocol: protocol, RemoteIPPrefix: remote}
		if port != 0 {
			r.PortMin, r.PortMax = &port, &port
		}
		s.st.addRule(r)
		return true
	}
	return false
}
