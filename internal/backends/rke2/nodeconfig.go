package rke2

import (
	"net/url"

	"github.com/waldur/site-agent/internal/secret"
)

// Vault object names per cluster (spec/rancher.md §5.3; U is the Waldur resource UUID as hex).
func VaultPolicyName(cluster string) string { return "rancher-provisioning-policy-" + cluster }

// VaultRoleName is the cluster's AppRole.
func VaultRoleName(cluster string) string { return "rancher-provisioning-role-" + cluster }

// VaultSecretPath is the token's path inside the KV v2 mount.
func VaultSecretPath(cluster string) string { return "rancher/cluster-" + cluster }

// RegistrySecretName is the fleet-default secret holding a cluster's private registry
// credentials (bootstrap rancher; U is the resource UUID as hex).
func RegistrySecretName(cluster string) string { return "rke2-registry-" + cluster }

// EtcdS3SecretName is the fleet-default secret holding a cluster's etcd snapshot S3 credentials
// (bootstrap rancher: rkeConfig.etcd.s3.cloudCredentialName).
func EtcdS3SecretName(cluster string) string { return "rke2-etcd-s3-" + cluster }

// VaultCredentials are what one node gets to log in to Vault once.
type VaultCredentials struct {
	RoleID   string
	SecretID secret.Secret // single use, short TTL
}

// NewNodeConfig assembles the cloud-init data of one node from the settings, the cluster
// spec and the node's inventory. serverAddr is the join target's address (rke2 bootstrap,
// joining nodes only), e.g. 10.0.0.11.
func NewNodeConfig(s *Settings, spec *ClusterSpec, name string, inv Inventory, creds VaultCredentials, serverAddr string) NodeConfig {
	node := spec.Node(inv.Role, inv.Index)
	vaultAddr, vaultSkipVerify := s.VaultEndpoint()
	cfg := NodeConfig{
		ClusterName: spec.Name, NodeName: name, Role: inv.Role.String(), Initial: inv.Initial, Bootstrap: s.Bootstrap,
		K8sVersion: s.K8sVersion, DataDir: StorageMountPoint,
		VaultAddr: vaultAddr, VaultTLSSkipVerify: vaultSkipVerify, VaultAppRoleMount: s.VaultAppRoleMount,
		VaultRoleID: creds.RoleID, VaultSecretID: creds.SecretID,
		VaultKVDataPath: s.VaultKVMount + "/data/" + VaultSecretPath(inv.Cluster),
		RancherURL:      s.BackendURL, RancherCAChecksum: s.RancherCAChecksum, RancherTLSSkipVerify: !*s.VerifyCert,
		RKE2InstallURL: s.RKE2InstallURL, Labels: inv.Labels(), Disks: Disks(s.NodeDiskDriver, node.DataVolumes),
		ClusterCIDR: s.ClusterCIDR, ServiceCIDR: s.ServiceCIDR,
		EtcdSnapshotCron: s.EtcdSnapshotScheduleCron, EtcdSnapshotRetention: s.EtcdSnapshotRetention,
		EtcdS3Config: s.Bootstrap == BootstrapRKE2 && s.EtcdS3 != nil && inv.Role == RoleServer,
	}
	if s.PrivateRegistryURL != "" {
		if u, err := url.Parse(s.PrivateRegistryURL); err == nil {
			cfg.PrivateRegistryHost = u.Host
		}
		cfg.RegistryConfig = s.Bootstrap == BootstrapRKE2 // RegistriesYAML, through Vault
	}
	if !inv.Initial && serverAddr != "" {
		cfg.ServerURL = "https://" + serverAddr + ":9345"
	}
	return cfg
}
