package rke2

import (
	"sync"

	"github.com/waldur/site-agent/internal/backends/rke2/nodetemplate"
)

// The fields a cloud-init template reads, named without reflection (nodetemplate.Record).
// TestTemplateFieldsAreNodeConfigs keeps these tables equal to the structs' fields.

var (
	_ nodetemplate.Record = (*NodeConfig)(nil)
	_ nodetemplate.Record = Disk{}
)

// nodeFields reads every exported field of NodeConfig by its name: Disks is a list of Disk
// records and Labels a map. Built on first use, not at start-up (most agents have no rke2
// offering).
var (
	nodeFieldsOnce sync.Once
	nodeFields     map[string]func(n *NodeConfig) any
)

func buildNodeFields() {
	nodeFields = map[string]func(n *NodeConfig) any{
		"ClusterName": func(n *NodeConfig) any { return n.ClusterName }, "NodeName": func(n *NodeConfig) any { return n.NodeName },
		"Role": func(n *NodeConfig) any { return n.Role }, "Initial": func(n *NodeConfig) any { return n.Initial },
		"Bootstrap": func(n *NodeConfig) any { return n.Bootstrap }, "K8sVersion": func(n *NodeConfig) any { return n.K8sVersion },
		"DataDir": func(n *NodeConfig) any { return n.DataDir }, "VaultAddr": func(n *NodeConfig) any { return n.VaultAddr },
		"VaultTLSSkipVerify": func(n *NodeConfig) any { return n.VaultTLSSkipVerify },
		"VaultAppRoleMount":  func(n *NodeConfig) any { return n.VaultAppRoleMount },
		"VaultRoleID":        func(n *NodeConfig) any { return n.VaultRoleID }, "VaultSecretID": func(n *NodeConfig) any { return n.VaultSecretID },
		"VaultKVDataPath": func(n *NodeConfig) any { return n.VaultKVDataPath }, "RancherURL": func(n *NodeConfig) any { return n.RancherURL },
		"RancherCAChecksum":    func(n *NodeConfig) any { return n.RancherCAChecksum },
		"RancherTLSSkipVerify": func(n *NodeConfig) any { return n.RancherTLSSkipVerify },
		"ServerURL":            func(n *NodeConfig) any { return n.ServerURL }, "RKE2InstallURL": func(n *NodeConfig) any { return n.RKE2InstallURL },
		"PrivateRegistryHost": func(n *NodeConfig) any { return n.PrivateRegistryHost },
		"RegistryConfig":      func(n *NodeConfig) any { return n.RegistryConfig }, "Labels": func(n *NodeConfig) any { return n.Labels },
		"ClusterCIDR": func(n *NodeConfig) any { return n.ClusterCIDR }, "ServiceCIDR": func(n *NodeConfig) any { return n.ServiceCIDR },
		"EtcdSnapshotCron":      func(n *NodeConfig) any { return n.EtcdSnapshotCron },
		"EtcdSnapshotRetention": func(n *NodeConfig) any { return n.EtcdSnapshotRetention },
		"EtcdS3Config":          func(n *NodeConfig) any { return n.EtcdS3Config },
		"Disks": func(n *NodeConfig) any {
			disks := make([]any, len(n.Disks))
			for i, d := range n.Disks {
				disks[i] = d
			}
			return disks
		},
	}
}

// Field implements nodetemplate.Record.
func (n *NodeConfig) Field(name string) (any, bool) {
	nodeFieldsOnce.Do(buildNodeFields)
	if f, ok := nodeFields[name]; ok {
		return f(n), true
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
