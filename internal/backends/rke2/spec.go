package rke2

import (
	"fmt"

	"github.com/waldur/site-agent/internal/backends"
)

// Role is a node's Kubernetes role.
type Role uint8

// Roles. RoleServer runs etcd and the control plane; RoleAgent runs workloads.
const (
	RoleServer Role = iota + 1
	RoleAgent
)

func (r Role) String() string {
	switch r {
	case RoleServer:
		return "server"
	case RoleAgent:
		return "agent"
	}
	return "unknown"
}

// ParseRole accepts server and agent (and the incumbent's worker for agent).
func ParseRole(s string) (Role, bool) {
	switch s {
	case "server":
		return RoleServer, true
	case "agent", "worker":
		return RoleAgent, true
	}
	return 0, false
}

// Volume is a Cinder volume.
type Volume struct {
	SizeGB int
	Type   string // volume type name; "" = the default type
}

// DataVolume is an extra volume formatted and mounted by cloud-init.
type DataVolume struct {
	Volume
	MountPoint string
	Filesystem string
}

// NodeSpec is what one VM is made of.
type NodeSpec struct {
	Flavor       string // Nova flavor name or id
	SystemVolume Volume
	DataVolumes  []DataVolume
}

// ClusterSpec is a Create or Update order turned into what to build.
type ClusterSpec struct {
	Name            string
	Mode            string // ModeManaged or ModeSelfManaged
	Servers, Agents int
	// ServerNodes and AgentNodes hold the node shapes; node i of a role uses element
	// min(i, len-1), so scaling beyond an order's list repeats its last node.
	ServerNodes, AgentNodes []NodeSpec
	SSHPublicKey            string
	SecurityGroups          []string
	InstallLonghorn         bool
}

// Node returns the shape of node index i of a role.
func (c *ClusterSpec) Node(r Role, i int) NodeSpec {
	l := c.ServerNodes
	if r == RoleAgent {
		l = c.AgentNodes
	}
	if len(l) == 0 {
		return NodeSpec{}
	}
	return l[min(i, len(l)-1)]
}

// shape is one node shape of a role and how many of the role's nodes have it.
type shape struct {
	node  NodeSpec
	count int
}

// shapes lists the shapes a role's nodes use with their counts (node i has shape min(i, len-1):
// the first shapes one node each, the last one the rest), so checks and totals work per shape,
// not per node.
func (c *ClusterSpec) shapes(r Role) []shape {
	l, count := c.ServerNodes, c.Servers
	if r == RoleAgent {
		l, count = c.AgentNodes, c.Agents
	}
	if count <= 0 {
		return nil
	}
	if len(l) == 0 {
		return []shape{{count: count}}
	}
	n := min(count, len(l))
	out := make([]shape, n)
	for i := range n {
		out[i] = shape{node: l[i], count: 1}
	}
	out[n-1].count += count - n
	return out
}

// Default mount points and filesystems of the data volumes (spec/rancher.md §5.3).
const (
	StorageMountPoint  = "/opt/rke2_storage"
	StorageFilesystem  = "btrfs"
	LonghornMountPoint = "/var/lib/longhorn"
	LonghornFilesystem = "ext4"
)

var (
	dnsLabelRe   = &lazyRegexp{pattern: `^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`}
	mountPointRe = &lazyRegexp{pattern: `^(/[A-Za-z0-9._-]+)+$`}
	filesystemRe = &lazyRegexp{pattern: `^(ext4|ext3|xfs|btrfs)$`}
)

// ParseSpec reads a resource's order attributes and limits. Limits win over attribute counts,
// so an Update order's new limits (the server_nodes / worker_nodes components) are the new
// counts. It checks the shape of the input (types, required keys); Check judges the result.
func ParseSpec(s *Settings, res backends.Resource) (ClusterSpec, error) {
	a := attrs{path: "attributes", m: res.Attributes}
	name, err := a.str("name", false)
	if err != nil {
		return ClusterSpec{}, err
	}
	if name == "" {
		name = res.Name
	}
	spec := ClusterSpec{Name: name, Mode: s.DeploymentMode}
	if spec.InstallLonghorn, err = a.boolean("install_longhorn"); err != nil {
		return spec, err
	}
	if s.DeploymentMode == ModeManaged {
		err = parseManaged(s, a, &spec)
	} else {
		err = parseSelfManaged(s, a, &spec)
	}
	if err != nil {
		return spec, err
	}
	if v, ok := res.Limits[s.ServerNodesComponent]; ok {
		if spec.Servers, ok = toInt(v); !ok || spec.Servers < 0 {
			return spec, fmt.Errorf("limits.%s: want a whole number, got %v", s.ServerNodesComponent, v)
		}
		if spec.Servers > maxServerNodes {
			return spec, fmt.Errorf("limits.%s: a cluster has at most %d server nodes, not %d", s.ServerNodesComponent, maxServerNodes, spec.Servers)
		}
	}
	v, ok := res.Limits[s.AgentNodesComponent]
	if !ok && s.DeploymentMode == ModeManaged && !a.has("worker_nodes_count") {
		return spec, fmt.Errorf("attributes.worker_nodes_count: is required (or the %s limit)", s.AgentNodesComponent)
	}
	if ok {
		if spec.Agents, ok = toInt(v); !ok || spec.Agents < 0 {
			return spec, fmt.Errorf("limits.%s: want a whole number, got %v", s.AgentNodesComponent, v)
		}
		if err := checkAgentCount(s, "limits."+s.AgentNodesComponent, spec.Agents); err != nil {
			return spec, err
		}
	}
	return spec, nil
}

// maxServerNodes is the most server nodes a cluster has (etcd quorum: 1, 3 or 5).
const maxServerNodes = 5

// maxDataVolumes is the most data volumes a node has: devices <driver>b to <driver>z.
const maxDataVolumes = 25

// checkAgentCount bounds the agents an order asks for by max_worker_nodes, before anything
// counts or plans per node: worker_nodes_count was accepted up to 2^40.
func checkAgentCount(s *Settings, key string, n int) error {
	if n > s.MaxWorkerNodes {
		return fmt.Errorf("%s: a cluster here has at most %d worker nodes (max_worker_nodes), not %d", key, s.MaxWorkerNodes, n)
	}
	return nil
}

func parseManaged(s *Settings, a attrs, spec *ClusterSpec) error {
	var err error
	if spec.Agents, err = a.integer("worker_nodes_count", false); err != nil {
		return err
	}
	if err := checkAgentCount(s, "attributes.worker_nodes_count", spec.Agents); err != nil {
		return err
	}
	flavor, err := a.str("worker_nodes_flavor_name", true)
	if err != nil {
		return err
	}
	dataMB, err := a.integer("worker_nodes_data_volume_size", true)
	if err != nil {
		return err
	}
	dataType, err := a.str("worker_nodes_data_volume_type_name", false)
	if err != nil {
		return err
	}
	agent := NodeSpec{Flavor: flavor, SystemVolume: Volume{SizeGB: s.WorkerSystemVolumeGB, Type: s.WorkerSystemVolumeType}}
	if dataMB > 0 {
		agent.DataVolumes = append(agent.DataVolumes, DataVolume{Volume: Volume{SizeGB: mbToGB(dataMB), Type: dataType},
			MountPoint: StorageMountPoint, Filesystem: StorageFilesystem})
	}
	if spec.InstallLonghorn {
		lhMB, err := a.integer("worker_nodes_longhorn_volume_size", true)
		if err != nil {
			return fmt.Errorf("%w (install_longhorn is set)", err)
		}
		lhType, err := a.str("worker_nodes_longhorn_volume_type_name", false)
		if err != nil {
			return err
		}
		agent.DataVolumes = append(agent.DataVolumes, DataVolume{Volume: Volume{SizeGB: mbToGB(lhMB), Type: lhType},
			MountPoint: LonghornMountPoint, Filesystem: LonghornFilesystem})
	}
	server := NodeSpec{Flavor: s.ServerFlavorName, SystemVolume: Volume{SizeGB: s.ServerSystemVolumeGB, Type: s.ServerSystemVolumeType}}
	if s.ServerDataVolumeGB > 0 {
		server.DataVolumes = []DataVolume{{Volume: Volume{SizeGB: s.ServerDataVolumeGB, Type: s.ServerDataVolumeType},
			MountPoint: StorageMountPoint, Filesystem: StorageFilesystem}}
	}
	spec.Servers = s.ServerNodesCount
	spec.ServerNodes, spec.AgentNodes = []NodeSpec{server}, []NodeSpec{agent}
	return nil
}

func parseSelfManaged(s *Settings, a attrs, spec *ClusterSpec) error {
	var err error
	if spec.SSHPublicKey, err = a.str("ssh_public_key", false); err != nil {
		return err
	}
	if spec.SecurityGroups, err = a.strList("security_groups"); err != nil {
		return err
	}
	nodes, err := a.list("nodes")
	if err != nil {
		return err
	}
	if len(nodes) == 0 {
		return fmt.Errorf("attributes.nodes: is required in self-managed mode (a list of nodes with role server or agent)")
	}
	if most := maxServerNodes + s.MaxWorkerNodes; len(nodes) > most {
		return fmt.Errorf("attributes.nodes: a cluster here has at most %d nodes (%d servers and max_worker_nodes agents), not %d",
			most, maxServerNodes, len(nodes))
	}
	for i, v := range nodes {
		n, err := object(fmt.Sprintf("attributes.nodes[%d]", i), v)
		if err != nil {
			return err
		}
		role, ns, err := parseNode(n)
		if err != nil {
			return err
		}
		if role == RoleServer {
			spec.ServerNodes = append(spec.ServerNodes, ns)
		} else {
			spec.AgentNodes = append(spec.AgentNodes, ns)
		}
	}
	spec.Servers, spec.Agents = len(spec.ServerNodes), len(spec.AgentNodes)
	return checkAgentCount(s, "attributes.nodes", spec.Agents)
}

func parseNode(n attrs) (Role, NodeSpec, error) {
	rs, err := n.str("role", true)
	if err != nil {
		return 0, NodeSpec{}, err
	}
	role, ok := ParseRole(rs)
	if !ok {
		return 0, NodeSpec{}, fmt.Errorf("%s: must be server or agent, got %q", n.key("role"), rs)
	}
	var ns NodeSpec
	if ns.Flavor, err = n.str("flavor", true); err != nil {
		return 0, ns, err
	}
	sysMB, err := n.integer("system_volume_size", false)
	if err != nil {
		return 0, ns, err
	}
	ns.SystemVolume.SizeGB = mbToGB(sysMB)
	if ns.SystemVolume.Type, err = n.str("system_volume_type", false); err != nil {
		return 0, ns, err
	}
	vols, err := n.list("data_volumes")
	if err != nil {
		return 0, ns, err
	}
	if len(vols) > maxDataVolumes {
		return 0, ns, fmt.Errorf("%s: a node has at most %d data volumes, not %d", n.key("data_volumes"), maxDataVolumes, len(vols))
	}
	for j, v := range vols {
		dv, err := parseDataVolume(n.key(fmt.Sprintf("data_volumes[%d]", j)), v)
		if err != nil {
			return 0, ns, err
		}
		ns.DataVolumes = append(ns.DataVolumes, dv)
	}
	return role, ns, nil
}

func parseDataVolume(path string, v any) (DataVolume, error) {
	d, err := object(path, v)
	if err != nil {
		return DataVolume{}, err
	}
	var dv DataVolume
	mb, err := d.integer("size", true)
	if err != nil {
		return dv, err
	}
	if mb == 0 {
		return dv, fmt.Errorf("%s: must be positive", d.key("size"))
	}
	dv.SizeGB = mbToGB(mb)
	if dv.Type, err = d.str("volume_type", false); err != nil {
		return dv, err
	}
	if dv.MountPoint, err = d.str("mount_point", true); err != nil {
		return dv, err
	}
	if !mountPointRe.get().MatchString(dv.MountPoint) {
		return dv, fmt.Errorf("%s: want an absolute path such as %s, got %q", d.key("mount_point"), StorageMountPoint, dv.MountPoint)
	}
	if dv.Filesystem, err = d.str("filesystem", false); err != nil {
		return dv, err
	}
	if dv.Filesystem == "" {
		dv.Filesystem = "ext4"
	}
	if !filesystemRe.get().MatchString(dv.Filesystem) {
		return dv, fmt.Errorf("%s: must be ext4, ext3, xfs or btrfs, got %q", d.key("filesystem"), dv.Filesystem)
	}
	return dv, nil
}
