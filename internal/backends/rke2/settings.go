package rke2

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/secret"
)

// Settings are the backend_settings of an rke2 offering. The keys are the incumbent's
// (seed 000: Rancher service settings and plugin_options) so an existing offering's settings
// carry over; site-agent adds bootstrap, cloud_init_template_file and role_requirements.
type Settings struct {
	// DeploymentMode is managed (the provider's flavors and volumes, the customer picks worker
	// count and flavor) or self_managed (the order lists every node).
	DeploymentMode string `mapstructure:"deployment_mode"`
	// Bootstrap is rancher (Rancher v1 provisioning + system-agent install) or rke2 (RKE2
	// installed from cloud-init, the cluster imported into Rancher afterwards).
	Bootstrap string `mapstructure:"bootstrap"`

	// Rancher connection.
	BackendURL string        `mapstructure:"backend_url"`
	Username   string        `mapstructure:"username"`
	Password   secret.Secret `mapstructure:"password"`
	VerifyCert *bool         `mapstructure:"verify_cert"`

	K8sVersion    string `mapstructure:"k8s_version"`
	BaseImageName string `mapstructure:"base_image_name"`
	FlavorsRegex  string `mapstructure:"flavors_regex"`
	// NodeDiskDriver names data disks /dev/<driver>b, /dev/<driver>c, … in cloud-init.
	NodeDiskDriver string `mapstructure:"node_disk_driver"`

	PrivateRegistryURL      string        `mapstructure:"private_registry_url"`
	PrivateRegistryUser     string        `mapstructure:"private_registry_user"`
	PrivateRegistryPassword secret.Secret `mapstructure:"private_registry_password"`

	AllocateFloatingIPToAllNodes bool `mapstructure:"allocate_floating_ip_to_all_nodes"`

	// Managed mode: what the provider fixes for servers, workers and the load balancer.
	ServerFlavorName       string                 `mapstructure:"managed_rancher_server_flavor_name"`
	ServerSystemVolumeGB   int                    `mapstructure:"managed_rancher_server_system_volume_size_gb"`
	ServerSystemVolumeType string                 `mapstructure:"managed_rancher_server_system_volume_type_name"`
	ServerDataVolumeGB     int                    `mapstructure:"managed_rancher_server_data_volume_size_gb"`
	ServerDataVolumeType   string                 `mapstructure:"managed_rancher_server_data_volume_type_name"`
	WorkerSystemVolumeGB   int                    `mapstructure:"managed_rancher_worker_system_volume_size_gb"`
	WorkerSystemVolumeType string                 `mapstructure:"managed_rancher_worker_system_volume_type_name"`
	LBFlavorName           string                 `mapstructure:"managed_rancher_load_balancer_flavor_name"`
	LBSystemVolumeGB       int                    `mapstructure:"managed_rancher_load_balancer_system_volume_size_gb"`
	LBSystemVolumeType     string                 `mapstructure:"managed_rancher_load_balancer_system_volume_type_name"`
	LBDataVolumeGB         int                    `mapstructure:"managed_rancher_load_balancer_data_volume_size_gb"`
	LBDataVolumeType       string                 `mapstructure:"managed_rancher_load_balancer_data_volume_type_name"`
	TenantMaxCPU           int                    `mapstructure:"managed_rancher_tenant_max_cpu"`
	TenantMaxRAMGB         int                    `mapstructure:"managed_rancher_tenant_max_ram"`
	TenantMaxDiskGB        int                    `mapstructure:"managed_rancher_tenant_max_disk"`
	ServerNodesCount       int                    `mapstructure:"server_nodes_count"` // managed: servers when the order has no limit
	MaxWorkerNodes         int                    `mapstructure:"max_worker_nodes"`   // agents a cluster may have; more is rejected
	ServerNodesComponent   string                 `mapstructure:"server_nodes_component"`
	AgentNodesComponent    string                 `mapstructure:"worker_nodes_component"`
	SystemVolumeMinSizeGB  int                    `mapstructure:"system_volume_min_size_gb"`
	RoleRequirements       map[string]Requirement `mapstructure:"role_requirements"`
	CloudInitTemplateFile  string                 `mapstructure:"cloud_init_template_file"`
	RKE2InstallURL         string                 `mapstructure:"rke2_install_url"`
	RancherCAChecksum      string                 `mapstructure:"rancher_ca_checksum"`
	VaultHost              string                 `mapstructure:"vault_host"`
	VaultPort              int                    `mapstructure:"vault_port"`
	VaultToken             secret.Secret          `mapstructure:"vault_token"`
	VaultTLSVerify         *bool                  `mapstructure:"vault_tls_verify"`
	VaultKVMount           string                 `mapstructure:"vault_kv_mount"`
	VaultAppRoleMount      string                 `mapstructure:"vault_approle_mount"`
	KeycloakURL            string                 `mapstructure:"keycloak_url"`
	KeycloakRealm          string                 `mapstructure:"keycloak_realm"`
	KeycloakUserRealm      string                 `mapstructure:"keycloak_user_realm"`
	KeycloakUsername       string                 `mapstructure:"keycloak_username"`
	KeycloakPassword       secret.Secret          `mapstructure:"keycloak_password"`
	KeycloakSSLVerify      *bool                  `mapstructure:"keycloak_ssl_verify"`
	KeycloakSyncFrequency  int                    `mapstructure:"keycloak_sync_frequency"`
	ArgoCDNamespace        string                 `mapstructure:"argocd_k8s_namespace"`
	ArgoCDKubeconfig       secret.Secret          `mapstructure:"argocd_k8s_kubeconfig"`
	// OpenStack is the cloud the VMs live in (settings_openstack.go).
	OpenStack   OpenStackSettings `mapstructure:"openstack"`
	Timeouts    `mapstructure:",squash"`
	Network     `mapstructure:",squash"` // cluster_cidr, service_cidr (settings_network.go)
	DayTwo      `mapstructure:",squash"` // repair, upgrades, etcd snapshots (settings_day2.go)
	vaultSource                          // which Vault (settings_vault.go)
	cloudInit   *CloudInit               // parsed template (default or the file's)
	flavorsRe   *regexp.Regexp
}

// Requirement is the least a node of one role needs (seed 000 ROLE_REQUIREMENT).
type Requirement struct {
	CPU   int `mapstructure:"cpu"`
	RAMMB int `mapstructure:"ram_mb"`
}

// Deployment modes and bootstrap modes.
const (
	ModeManaged     = "managed"
	ModeSelfManaged = "self_managed"

	BootstrapRancher = "rancher"
	BootstrapRKE2    = "rke2"
)

// Defaults (seed 000 and spec/rancher.md §5.1).
const (
	DefaultK8sVersion        = "v1.31.7+rke2r1"
	defaultVaultPort         = 8200
	defaultServerNodes       = 3
	defaultSystemVolumeMinGB = 64
	defaultMaxWorkerNodes    = 100
	maxMaxWorkerNodes        = 10000
)

var k8sVersionRe = &lazyRegexp{pattern: `^v1\.\d+\.\d+\+rke2r\d+$`}

// DecodeSettings decodes, defaults and validates an rke2 backend_settings section. Warnings are
// unknown keys; the error names the first bad key.
func DecodeSettings(in backends.Settings) (Settings, []string, error) {
	var s Settings
	warnings, err := backends.DecodeSettings(in, &s)
	if err != nil {
		return s, warnings, err
	}
	s.aliases = presentVaultAliases(in)
	s.applyDefaults()
	if err := s.validate(); err != nil {
		return s, warnings, err
	}
	ci, err := loadCloudInit(s.CloudInitTemplateFile)
	if err != nil {
		return s, warnings, err
	}
	s.cloudInit = ci
	return s, warnings, nil
}

func (s *Settings) applyDefaults() {
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	yes := func(v **bool) {
		if *v == nil {
			t := true
			*v = &t
		}
	}
	def(&s.DeploymentMode, ModeManaged)
	def(&s.Bootstrap, BootstrapRancher)
	def(&s.K8sVersion, DefaultK8sVersion)
	def(&s.NodeDiskDriver, "sd")
	def(&s.VaultKVMount, "secret")
	def(&s.VaultAppRoleMount, "approle")
	def(&s.ServerNodesComponent, "server_nodes")
	def(&s.AgentNodesComponent, "worker_nodes")
	def(&s.KeycloakRealm, "Waldur")
	def(&s.RKE2InstallURL, "https://get.rke2.io")
	def(&s.KeycloakUserRealm, "master")
	yes(&s.VerifyCert)
	yes(&s.VaultTLSVerify)
	yes(&s.KeycloakSSLVerify)
	if s.VaultPort == 0 {
		s.VaultPort = defaultVaultPort
	}
	if s.ServerNodesCount == 0 {
		s.ServerNodesCount = defaultServerNodes
	}
	if s.MaxWorkerNodes == 0 {
		s.MaxWorkerNodes = defaultMaxWorkerNodes
	}
	if s.SystemVolumeMinSizeGB == 0 {
		s.SystemVolumeMinSizeGB = defaultSystemVolumeMinGB
	}
	if s.KeycloakSyncFrequency == 0 {
		s.KeycloakSyncFrequency = 15
	}
	req := map[string]Requirement{RoleServer.String(): {CPU: 2, RAMMB: 4096}, RoleAgent.String(): {CPU: 1, RAMMB: 1024}}
	for k, v := range s.RoleRequirements { // per field: a role given only cpu keeps its RAM minimum
		d := req[k]
		if v.CPU != 0 {
			d.CPU = v.CPU
		}
		if v.RAMMB != 0 {
			d.RAMMB = v.RAMMB
		}
		req[k] = d
	}
	s.RoleRequirements = req
	s.OpenStack.applyDefaults()
	s.Timeouts.applyDefaults()
	s.Network.applyDefaults()
	s.DayTwo.applyDefaults()
}

// validate reports the first problem of each part of the settings, all at once.
func (s *Settings) validate() error {
	return errors.Join(s.validateCore(), s.validateVolumes(), s.OpenStack.validate(), s.Network.validate(s.OpenStack.SubnetCIDR),
		s.Timeouts.validate(), s.validateIntegrations(), s.DayTwo.validate())
}

func (s *Settings) validateCore() error {
	switch s.DeploymentMode {
	case ModeManaged, ModeSelfManaged:
	default:
		return fmt.Errorf("backend_settings.deployment_mode: must be managed or self_managed, got %q", s.DeploymentMode)
	}
	switch s.Bootstrap {
	case BootstrapRancher, BootstrapRKE2:
	default:
		return fmt.Errorf("backend_settings.bootstrap: must be rancher or rke2, got %q", s.Bootstrap)
	}
	if err := checkHTTPURL("backend_url", s.BackendURL); err != nil {
		return err
	}
	for _, r := range []struct{ key, v string }{{"username", s.Username}, {"password", s.Password.Reveal()}, {"base_image_name", s.BaseImageName}} {
		if strings.TrimSpace(r.v) == "" {
			return fmt.Errorf("backend_settings.%s: is required", r.key)
		}
	}
	if !k8sVersionRe.get().MatchString(s.K8sVersion) {
		return fmt.Errorf("backend_settings.k8s_version: want an RKE2 release such as %s, got %q", DefaultK8sVersion, s.K8sVersion)
	}
	if s.DeploymentMode == ModeManaged && s.ServerFlavorName == "" {
		return fmt.Errorf("backend_settings.managed_rancher_server_flavor_name: is required in managed mode")
	}
	if !validServerCount(s.ServerNodesCount) {
		return fmt.Errorf("backend_settings.server_nodes_count: must be 1, 3 or 5 (etcd quorum), got %d", s.ServerNodesCount)
	}
	if s.MaxWorkerNodes < 1 || s.MaxWorkerNodes > maxMaxWorkerNodes {
		return fmt.Errorf("backend_settings.max_worker_nodes: must be between 1 and %d, got %d", maxMaxWorkerNodes, s.MaxWorkerNodes)
	}
	if s.FlavorsRegex != "" {
		re, err := regexp.Compile(s.FlavorsRegex)
		if err != nil {
			return fmt.Errorf("backend_settings.flavors_regex: %v", err)
		}
		s.flavorsRe = re
	}
	if !regexp.MustCompile(`^[a-z]{2,4}$`).MatchString(s.NodeDiskDriver) {
		return fmt.Errorf("backend_settings.node_disk_driver: want a device prefix such as sd or vd, got %q", s.NodeDiskDriver)
	}
	for role, r := range s.RoleRequirements {
		if role != RoleServer.String() && role != RoleAgent.String() {
			return fmt.Errorf("backend_settings.role_requirements.%s: roles are server and agent", role)
		}
		if r.CPU < 0 || r.RAMMB < 0 {
			return fmt.Errorf("backend_settings.role_requirements.%s: cpu and ram_mb must not be negative", role)
		}
	}
	return nil
}

func (s *Settings) validateVolumes() error {
	sizes := []struct {
		key string
		v   int
	}{
		{"managed_rancher_server_system_volume_size_gb", s.ServerSystemVolumeGB},
		{"managed_rancher_server_data_volume_size_gb", s.ServerDataVolumeGB},
		{"managed_rancher_worker_system_volume_size_gb", s.WorkerSystemVolumeGB},
		{"managed_rancher_load_balancer_system_volume_size_gb", s.LBSystemVolumeGB},
		{"managed_rancher_load_balancer_data_volume_size_gb", s.LBDataVolumeGB},
		{"managed_rancher_tenant_max_cpu", s.TenantMaxCPU},
		{"managed_rancher_tenant_max_ram", s.TenantMaxRAMGB},
		{"managed_rancher_tenant_max_disk", s.TenantMaxDiskGB},
		{"system_volume_min_size_gb", s.SystemVolumeMinSizeGB},
	}
	for _, z := range sizes {
		if z.v < 0 {
			return fmt.Errorf("backend_settings.%s: must not be negative, got %d", z.key, z.v)
		}
	}
	for _, z := range []struct {
		key string
		v   int
	}{sizes[0], sizes[2]} { // node system volumes
		if z.v != 0 && z.v < s.SystemVolumeMinSizeGB {
			return fmt.Errorf("backend_settings.%s: system volumes need at least %d GB (system_volume_min_size_gb), got %d", z.key, s.SystemVolumeMinSizeGB, z.v)
		}
	}
	if s.ServerNodesComponent == s.AgentNodesComponent {
		return fmt.Errorf("backend_settings.worker_nodes_component: must differ from server_nodes_component (%q)", s.ServerNodesComponent)
	}
	return nil
}

func (s *Settings) validateIntegrations() error {
	if err := checkHTTPURL("rke2_install_url", s.RKE2InstallURL); err != nil {
		return err
	}
	if s.RancherCAChecksum != "" && !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(s.RancherCAChecksum) {
		return fmt.Errorf("backend_settings.rancher_ca_checksum: want the SHA-256 of Rancher's CA certificate (64 hex digits)")
	}
	if s.PrivateRegistryURL != "" {
		if err := checkHTTPURL("private_registry_url", s.PrivateRegistryURL); err != nil {
			return err
		}
	}
	if (s.PrivateRegistryUser == "") != s.PrivateRegistryPassword.IsZero() {
		return fmt.Errorf("backend_settings.private_registry_user: private_registry_user and private_registry_password go together")
	}
	if s.PrivateRegistryUser != "" && s.PrivateRegistryURL == "" {
		return fmt.Errorf("backend_settings.private_registry_url: is required with private_registry_user")
	}
	// Both bootstrap modes hand the node its token through Vault, so Vault is not optional:
	// the vault: section, or these deprecated keys (ConnectVault).
	if err := s.validateVaultAliases(); err != nil {
		return err
	}
	pathRe := regexp.MustCompile(`^[a-zA-Z0-9_-]+(/[a-zA-Z0-9_-]+)*$`)
	if !pathRe.MatchString(s.VaultKVMount) {
		return fmt.Errorf("backend_settings.vault_kv_mount: want a mount path such as secret, got %q", s.VaultKVMount)
	}
	if !pathRe.MatchString(s.VaultAppRoleMount) {
		return fmt.Errorf("backend_settings.vault_approle_mount: want a mount path such as approle, got %q", s.VaultAppRoleMount)
	}
	if s.KeycloakURL != "" {
		if err := checkHTTPURL("keycloak_url", s.KeycloakURL); err != nil {
			return err
		}
		if s.KeycloakUsername == "" || s.KeycloakPassword.IsZero() {
			return fmt.Errorf("backend_settings.keycloak_username: keycloak_username and keycloak_password are required with keycloak_url")
		}
	}
	if s.ArgoCDKubeconfig.IsZero() != (s.ArgoCDNamespace == "") {
		return fmt.Errorf("backend_settings.argocd_k8s_namespace: argocd_k8s_namespace and argocd_k8s_kubeconfig go together")
	}
	if s.ArgoCDNamespace != "" && !dnsLabelRe.get().MatchString(s.ArgoCDNamespace) {
		return fmt.Errorf("backend_settings.argocd_k8s_namespace: want a namespace name, got %q", s.ArgoCDNamespace)
	}
	if s.CloudInitTemplateFile != "" {
		if _, err := os.Stat(s.CloudInitTemplateFile); err != nil {
			return fmt.Errorf("backend_settings.cloud_init_template_file: %v", err)
		}
	}
	return nil
}

// CloudInit is the parsed cloud-init template (the built-in one unless a file was configured).
func (s *Settings) CloudInit() *CloudInit { return s.cloudInit }

// FlavorAllowed reports whether flavors_regex (if set) admits a flavor name.
func (s *Settings) FlavorAllowed(name string) bool {
	return s.flavorsRe == nil || s.flavorsRe.MatchString(name)
}

func checkHTTPURL(key, v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("backend_settings.%s: want an http(s) URL, got %q", key, v)
	}
	return nil
}

func validServerCount(n int) bool { return n == 1 || n == 3 || n == 5 }
