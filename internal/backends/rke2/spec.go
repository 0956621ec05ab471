package rke2

import (
	"fmt"
	"regexp"

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

// Default mount points and filesystems of the data volumes (spec/rancher.md §5.3).
const (
	StorageMountPoint  = "/opt/rke2_storage"
	StorageFilesystem  = "btrfs"
	LonghornMountPoint = "/var/lib/longhorn"
	LonghornFilesystem = "ext4"
)

var (
	dnsLabelRe   = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	mountPointRe = regexp.MustCompile(`^(/[A-Za-z0-9._-]+)+$`)
	filesystemRe = regexp.MustCompile(`^(ext4|ext3|xfs|btrfs)$`)
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
		err = parseSelfManaged(a, &spec)
	}
	if err != nil {
		return spec, err
	}
	if v, ok := res.Limits[s.ServerNodesComponent]; ok {
		if spec.Servers, ok = toInt(v); !ok || spec.Servers < 0 {
			return spec, fmt.Errorf("limits.%s: want a whole number, got %v", s.ServerNodesComponent, v)
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
	}
	return spec, nil
}

func parseManaged(s *Settings, a attrs, spec *ClusterSpec) error {
	var err error
	if spec.Agents, err = a.integer("worker_nodes_count", false); err != nil {
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

func parseSelfManaged(a attrs, spec *ClusterSpec) error {
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
	return nil
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
	if !mountPointRe.MatchString(dv.MountPoint) {
		return dv, fmt.Errorf("%s: want an absolute path such as %s, got %q", d.key("mount_point"), StorageMountPoint, dv.MountPoint)
	}
	if dv.Filesystem, err = d.str("filesystem", false); err != nil {
		return dv, err
	}
	if dv.Filesystem == "" {
		dv.Filesystem = "ext4"
	}
	if !filesystemRe.MatchString(dv.Filesystem) {
		return dv, fmt.Errorf("%s: must be ext4, ext3, xfs or btrfs, got %q", d.key("filesystem"), dv.Filesystem)
	}
	return dv, nil
}
