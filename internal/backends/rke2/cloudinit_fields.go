package rke2

import "github.com/waldur/site-agent/internal/backends/rke2/nodetemplate"

// The fields a cloud-init template reads, named without reflection (nodetemplate.Record).
// TestTemplateFieldsAreNodeConfigs keeps these lists equal to the structs' fields.

var (
	_ nodetemplate.Record = (*NodeConfig)(nil)
	_ nodetemplate.Record = Disk{}
)

// Field implements nodetemplate.Record: every exported field of NodeConfig by its name; Disks
// is a list of Disk records and Labels a map.
func (n *NodeConfig) Field(name string) (any, bool) {
	if v, ok := n.vaultField(name); ok {
		return v, true
	}
	switch name {
	case "ClusterName":
		return n.ClusterName, true
	case "NodeName":
		return n.NodeName, true
	case "Role":
		return n.Role, true
	case "Initial":
		return n.Initial, true
	case "Bootstrap":
		return n.Bootstrap, true
	case "K8sVersion":
		return n.K8sVersion, true
	case "DataDir":
		return n.DataDir, true
	case "RancherURL":
		return n.RancherURL, true
	case "RancherCAChecksum":
		return n.RancherCAChecksum, true
	case "RancherTLSSkipVerify":
		return n.RancherTLSSkipVerify, true
	case "ServerURL":
		return n.ServerURL, true
	case "RKE2InstallURL":
		return n.RKE2InstallURL, true
	case "PrivateRegistryHost":
		return n.PrivateRegistryHost, true
	case "RegistryConfig":
		return n.RegistryConfig, true
	case "Labels":
		return n.Labels, true
	case "Disks":
		disks := make([]any, len(n.Disks))
		for i, d := range n.Disks {
			disks[i] = d
		}
		return disks, true
	}
	return nil, false
}

func (n *NodeConfig) vaultField(name string) (any, bool) {
	switch name {
	case "VaultAddr":
		return n.VaultAddr, true
	case "VaultTLSSkipVerify":
		return n.VaultTLSSkipVerify, true
	case "VaultAppRoleMount":
		return n.VaultAppRoleMount, true
	case "VaultRoleID":
		return n.VaultRoleID, true
	case "VaultSecretID":
		return n.VaultSecretID, true
	case "VaultKVDataPath":
		return n.VaultKVDataPath, true
	}
	return nil, false
}

// Field implements nodetemplate.Record.
func (d Disk) Field(name string) (any, bool) {
	switch name {
	case "Device":
		return d.Device, true
	case "Filesystem":
		return d.Filesystem, true
	case "MountPoint":
		return d.MountPoint, true
	}
	return nil, false
}
