package rke2

import (
	"context"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/secret"
)

// The executor reaches OpenStack and Rancher through these two ports. Their implementations
// live elsewhere (novainfra on gophercloud; assembly's on the shared Rancher client); the executor,
// its tests and the registry entry only see the interfaces. Every method is idempotent, treats
// an absent object as success where it deletes, and returns errors classified by
// internal/failure (transient: retry later; failure.Errorf: a reason a customer can read;
// failure.ErrNotFound; failure.ErrDuplicate when a name belongs to another cluster).

// ClusterRef names one cluster on every upstream.
type ClusterRef struct {
	UUID string // the Waldur resource UUID (hex): the inventory's cluster key
	Name string // a DNS label; node names and the Rancher cluster name derive from it
}

// NetworkInfo is what a node needs from the cluster's network chain.
type NetworkInfo struct {
	ProjectID      string   // the tenant the cluster's VMs live in
	NetworkID      string   // the cluster's private network
	SubnetID       string   // its subnet (routed to the external network)
	SecurityGroups []string // ids: the cluster's Kubernetes groups plus the order's
}

// ServerRequest is one VM to boot.
type ServerRequest struct {
	Name           string
	Inventory      Inventory // written as server metadata and tags (Inventory.Metadata, Tags)
	Node           NodeSpec  // flavor, system volume (boot from volume) and data volumes, in order
	Image          string    // Glance image name (Settings.BaseImageName)
	UserData       UserData
	FloatingIP     bool
	SSHPublicKey   string   // "" for none; a key pair named after the cluster holds it
	SecurityGroups []string // names from the order, in addition to NetworkInfo.SecurityGroups
	// Unlisted: the caller listed the cluster's servers in this pass (Infra.Servers) and none
	// of this name was live, so CreateServer does not list them again before it boots.
	Unlisted bool
}

// Infra is the OpenStack side of the clusters: the network chain, the VMs and their volumes.
type Infra interface {
	FlavorSource
	// EnsureNetwork finds or makes the cluster's tenant (per cluster, or the shared management
	// tenant), network, subnet, router and security group (6443 and 22 from the configured
	// networks, 9345, 10250 and the rest node-to-node, 80/443), brings the group's rules in step
	// with the settings, and returns their ids.
	EnsureNetwork(ctx context.Context, c ClusterRef) (NetworkInfo, error)
	// Servers lists the cluster's VMs (by its tag), with status, metadata and address.
	Servers(ctx context.Context, c ClusterRef) ([]ServerView, error)
	// CreateServer boots one node: volumes, port, server (metadata, tags, user data), floating
	// IP. A create whose answer is lost is sent again by a later pass; Observe sets the
	// duplicate aside as a stray.
	CreateServer(ctx context.Context, c ClusterRef, net NetworkInfo, req ServerRequest) (ServerView, error)
	// RepairNode checks what Nova's listing of an ACTIVE node cannot prove and mends what can
	// be mended in place: a VM listed without an address on the cluster network is looked up
	// in Neutron, and with floatingIP the node's port gets a floating IP unless it has one
	// (found by its port, so a create whose answer was lost is not made twice). It returns ""
	// when the node is whole, else why it must be made again (no port on the cluster network).
	RepairNode(ctx context.Context, c ClusterRef, net NetworkInfo, s ServerView, floatingIP bool) (string, error)
	// DeleteServer deletes a VM with its volumes and floating IP.
	DeleteServer(ctx context.Context, c ClusterRef, s ServerView) error
	// ClearLeftovers finds what others made in the cluster's project or on its network and
	// refuses, naming each object, or deletes it (force_destroy); terminate calls it first.
	ClearLeftovers(ctx context.Context, c ClusterRef) error
	// TearDown deletes what EnsureNetwork made for this cluster (and the tenant when it is the
	// cluster's own). What blocks deletion is removed or refused, naming it, per settings.
	TearDown(ctx context.Context, c ClusterRef) error
	// Diagnose: OpenStack reachable, image and flavors found, quota headroom for the largest
	// allowed order.
	Diagnose(ctx context.Context) []backends.Check
}

// ProvisionSpec is what Rancher needs to create a cluster.
type ProvisionSpec struct {
	K8sVersion string
	CNI        string // cilium unless settings say otherwise
	DataDir    string // RKE2 and system-agent data directory on the nodes
	// ClusterCIDR and ServiceCIDR are the pod and service networks: machineGlobalConfig
	// cluster-cidr and service-cidr of a provisioned cluster, and recorded on every cluster
	// (RancherCluster) so that its later nodes get the networks it was made with.
	ClusterCIDR, ServiceCIDR string
	// RegistryURL is the private registry ("" none): docker.io's mirror and, by its host, the
	// system-default-registry; with RegistryUser its credentials are a basic-auth secret in
	// fleet-default (RegistrySecretName) that the cluster's registry config names.
	RegistryURL      string
	RegistryUser     string
	RegistryPassword secret.Secret
	Imported         bool // bootstrap rke2: a cluster imported once RKE2 runs, not provisioned by Rancher
	// Etcd is the etcd snapshot configuration: rkeConfig.etcd of a provisioned cluster, with
	// the S3 credentials in a fleet-default secret (EtcdS3SecretName) that it names.
	Etcd EtcdSnapshots
	// Upgrade is how Rancher rolls a Kubernetes upgrade: rkeConfig.upgradeStrategy of a
	// provisioned cluster, rke2Config.rke2upgradeStrategy of an imported one (upgrade.go).
	Upgrade UpgradeStrategy
}

// EtcdSnapshots is when RKE2 snapshots etcd, how many it keeps, and where else it puts them.
type EtcdSnapshots struct {
	ScheduleCron string
	Retention    int
	S3           *EtcdS3 // nil: on the servers' disks only
}

// UpgradeStrategy is how a Kubernetes upgrade goes through the nodes: servers one at a time,
// then AgentBatch agents at a time, each drained first (within DrainTimeout).
type UpgradeStrategy struct {
	AgentBatch   int
	DrainTimeout time.Duration
}

// RancherCluster is a cluster as Rancher shows it.
type RancherCluster struct {
	Name         string // provisioning cluster name in fleet-default (ClusterRef.Name)
	ManagementID string // c-m-…, from status.clusterName; "" until Rancher assigns it
	State        string // Rancher's state of the management cluster (active, provisioning, …)
	// ClusterCIDR and ServiceCIDR are the networks recorded when the cluster was made; "" for a
	// cluster made before they were recorded, which has RKE2's defaults.
	ClusterCIDR, ServiceCIDR string
	// K8sVersion is the RKE2 release the cluster should run: a provisioned cluster's
	// spec.kubernetesVersion, an imported one's AnnotationK8sVersion ("" when not recorded).
	K8sVersion string
	// Paused: an operator annotated the cluster AnnotationReconcile=paused (a restore is under
	// way): the agent reports its health but changes nothing.
	Paused bool
	// Imported: Rancher did not provision it (bootstrap rke2; no rkeConfig).
	Imported bool
}

// Registration is how nodes and clusters register with Rancher; both are credentials (the URL
// embeds the token), and the caller Forgets them.
type Registration struct {
	Token       secret.Secret // the system-agent's --token (bootstrap rancher)
	ManifestURL secret.Secret // <rancher>/v3/import/<token>_<cluster>.yaml: the import manifest (bootstrap rke2)
}

// Capacity is what a cluster's nodes offer, summed (Rancher's cluster capacity).
type Capacity struct {
	Nodes       int
	CPUMillis   int64
	MemoryBytes int64
	// StorageBytes is the nodes' ephemeral storage.
	StorageBytes int64
}

// Rancher is the Rancher side of the clusters.
type Rancher interface {
	ClusterNames
	// EnsureCluster finds or creates the cluster (labelled with c.UUID). A cluster of that name
	// labelled with another UUID is failure.ErrDuplicate.
	EnsureCluster(ctx context.Context, c ClusterRef, spec ProvisionSpec) (RancherCluster, error)
	// EnsureClusterSecrets makes the fleet-default secrets a provisioned cluster's spec names
	// hold what they should: the private registry's credentials (spec.RegistryUser and
	// RegistryPassword, a basic-auth secret) and the etcd snapshots' S3 credentials
	// (spec.Etcd.S3). EnsureCluster makes them before it creates a cluster that names them,
	// and DeleteCluster deletes them once the cluster is gone.
	EnsureClusterSecrets(ctx context.Context, c ClusterRef, spec ProvisionSpec) error
	// ClusterOf names the cluster labelled with the resource UUID ("" when there is none; a
	// failure when several are).
	ClusterOf(ctx context.Context, uuid string) (string, error)
	// Cluster finds the cluster without creating it (failure.ErrNotFound when absent, or when
	// the cluster of that name is labelled with another UUID).
	Cluster(ctx context.Context, c ClusterRef) (RancherCluster, error)
	// Registration returns the cluster's registration token and import manifest URL, creating
	// the token if there is none (failure.ErrNotReady while Rancher has not issued it yet).
	Registration(ctx context.Context, rc RancherCluster) (Registration, error)
	// Nodes lists the cluster's nodes with state and labels.
	Nodes(ctx context.Context, rc RancherCluster) ([]RancherNodeView, error)
	// SetNodeLabels merges labels into a node's labels.
	SetNodeLabels(ctx context.Context, rc RancherCluster, nodeID string, labels map[string]string) error
	// Drain cordons and drains a node (safe to repeat) and reports whether it is drained.
	Drain(ctx context.Context, rc RancherCluster, nodeID string) (bool, error)
	// DeleteNode removes a node from Rancher.
	DeleteNode(ctx context.Context, rc RancherCluster, nodeID string) error
	// RemoveEtcdMember has the cluster remove a server node's etcd member, through what RKE2
	// and Rancher provide (docs/rke2.md, "etcd membership"), and reports whether it is gone —
	// true too when the cluster does not know the node. Safe to repeat; the executor calls it
	// until it reports true before it deletes the VM: etcd keeps a dead member, whose vote then
	// counts against quorum, until the member is removed.
	RemoveEtcdMember(ctx context.Context, rc RancherCluster, node string) (bool, error)
	// SetK8sVersion asks Rancher to upgrade the cluster to an RKE2 release with the strategy:
	// a provisioned cluster's spec.kubernetesVersion and rkeConfig.upgradeStrategy (Rancher's
	// planner rolls the machines), an imported one's management cluster rke2Config (Rancher's
	// system-upgrade-controller plans roll the nodes) and its AnnotationK8sVersion. Safe to
	// repeat.
	SetK8sVersion(ctx context.Context, c ClusterRef, rc RancherCluster, version string, u UpgradeStrategy) error
	// DeleteCluster deletes the cluster; failure.ErrNotReady while Rancher is still removing it.
	DeleteCluster(ctx context.Context, c ClusterRef) error
	// Capacity sums the cluster's node capacity.
	Capacity(ctx context.Context, rc RancherCluster) (Capacity, error)
	// BindGroup makes sure a cluster role template binding gives the group principal
	// (keycloakoidc_group://<name>) the role template on the cluster.
	BindGroup(ctx context.Context, rc RancherCluster, principal, roleTemplate string) error
	// UnbindGroups removes the cluster's bindings of the given principals.
	UnbindGroups(ctx context.Context, rc RancherCluster, principals []string) error
	// Kubeconfig makes a kubeconfig for the cluster (a new Rancher API token each call).
	Kubeconfig(ctx context.Context, rc RancherCluster) (Kubeconfig, error)
	// Diagnose: Rancher v1 and v3 reachable with the configured key.
	Diagnose(ctx context.Context) []backends.Check
	// Ping: Rancher up and taking the key — one request (the v1 provisioning API, one
	// object), none when Rancher answered a request less than fresh ago.
	Ping(ctx context.Context, fresh time.Duration) error
}

// Kubeconfig is how a client reaches a cluster through Rancher.
type Kubeconfig struct {
	Server string        // https://<rancher>/k8s/clusters/<id>
	Token  secret.Secret // a Rancher API token scoped to the cluster
	CAData []byte        // PEM of Rancher's CA; nil when Rancher's certificate is publicly trusted
}

// ArgoCluster is a cluster as ArgoCD is told about it.
type ArgoCluster struct {
	UUID     string // the resource UUID: the secret is cluster-<uuid>
	Name     string
	Longhorn bool // labelled k8s.waldur.com/longhorn-enabled=true
}

// ArgoCD registers clusters with an ArgoCD instance (a cluster secret in its namespace).
type ArgoCD interface {
	// Ensure registers the cluster once: when its secret is absent, mint is called for the
	// server and a token and the secret is created; an existing secret only has its labels
	// brought in step (no new token).
	Ensure(ctx context.Context, c ArgoCluster, mint func(context.Context) (Kubeconfig, error)) error
	// Remove deletes the cluster's secret; an absent one is success.
	Remove(ctx context.Context, uuid string) error
	// Check: the namespace is reachable with the configured kubeconfig.
	Check(ctx context.Context) backends.Check
}
