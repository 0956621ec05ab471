package rke2

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/waldur/site-agent/internal/backends/rke2/nodetemplate"
	"github.com/waldur/site-agent/internal/secret"
)

//go:embed templates/node.yaml.tmpl
var defaultTemplate string

// maxUserData is Nova's limit on user_data after base64 encoding.
const maxUserData = 65535

// CloudInit renders a node's user data from a template in text/template's language (the
// subset package nodetemplate renders without reflection): the built-in one or a site's
// (backend_settings.cloud_init_template_file). Templates get NodeConfig as data and the
// functions quote (a YAML/JSON double-quoted string), shq (a shell single-quoted word) and
// reveal (the value of a secret.Secret; a secret printed without it shows [REDACTED]).
type CloudInit struct {
	tmpl   *nodetemplate.Template
	source string // "built-in" or the file name, for errors
}

// Disk is one data volume as cloud-init sees it.
type Disk struct {
	Device     string // /dev/<driver><letter>, b for the first data volume
	Filesystem string
	MountPoint string
}

// NodeConfig is the data a cloud-init template receives.
type NodeConfig struct {
	ClusterName string
	NodeName    string
	Role        string // server or agent
	Initial     bool
	Bootstrap   string // rancher or rke2
	K8sVersion  string
	DataDir     string // RKE2 and system-agent state, on the first data volume (default /opt/rke2_storage)

	VaultAddr          string
	VaultTLSSkipVerify bool
	VaultAppRoleMount  string
	VaultRoleID        string
	VaultSecretID      secret.Secret // single use; removed from the node after login; the caller Forgets it once the VM exists
	VaultKVDataPath    string        // KV v2 API path of the token, e.g. secret/data/rancher/cluster-<uuid>

	// rancher bootstrap
	RancherURL           string
	RancherCAChecksum    string
	RancherTLSSkipVerify bool
	// rke2 bootstrap
	ServerURL           string // https://<live server>:9345 for joining nodes; "" for the initial server
	RKE2InstallURL      string
	PrivateRegistryHost string
	// RegistryConfig: the cluster's Vault secret carries registries.yaml (registries_yaml_b64),
	// which the node writes to /etc/rancher/rke2/registries.yaml (0600).
	RegistryConfig bool
	// ClusterCIDR and ServiceCIDR are the cluster's pod and service networks (servers' config
	// cluster-cidr and service-cidr); "" leaves RKE2's default, as for a cluster made before
	// they were recorded.
	ClusterCIDR, ServiceCIDR string
	// EtcdSnapshotCron and EtcdSnapshotRetention are servers' etcd-snapshot-schedule-cron and
	// etcd-snapshot-retention; EtcdS3Config: the cluster's Vault secret carries the etcd-s3-*
	// options (etcd_s3_yaml_b64, the S3 secret key among them), which a server writes to
	// /etc/rancher/rke2/config.yaml.d/50-etcd-s3.yaml (0600).
	EtcdSnapshotCron      string
	EtcdSnapshotRetention int
	EtcdS3Config          bool

	Labels map[string]string // node labels (the inventory)
	Disks  []Disk
}

// UserData is rendered cloud-init. It holds a single-use Vault secret id, so it never prints.
type UserData struct{ b []byte }

// Bytes returns the user data for the Nova request.
func (u UserData) Bytes() []byte { return u.b }

// String implements fmt.Stringer without revealing the content.
func (u UserData) String() string { return fmt.Sprintf("[user data, %d bytes]", len(u.b)) }

// Format implements fmt.Formatter: every verb prints String.
func (u UserData) Format(f fmt.State, _ rune) { fmt.Fprint(f, u.String()) }

// MarshalJSON keeps user data out of JSON logs.
func (u UserData) MarshalJSON() ([]byte, error) { return json.Marshal(u.String()) }

// Disks names the data volumes' devices in attachment order: /dev/<driver>b, c, …
func Disks(driver string, vols []DataVolume) []Disk {
	out := make([]Disk, 0, len(vols))
	for i, v := range vols {
		out = append(out, Disk{Device: fmt.Sprintf("/dev/%s%c", driver, 'b'+i), Filesystem: v.Filesystem, MountPoint: v.MountPoint})
	}
	return out
}

func loadCloudInit(path string) (*CloudInit, error) {
	text, source := defaultTemplate, "built-in"
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("backend_settings.cloud_init_template_file: %v", err)
		}
		text, source = string(b), path
	}
	c, err := ParseCloudInit(source, text)
	if err != nil && path != "" {
		return nil, fmt.Errorf("backend_settings.cloud_init_template_file: %w", err)
	}
	return c, err
}

// ParseCloudInit parses a template and proves it renders for every kind of node in both
// bootstrap modes, so a broken site template stops the agent at start, not at the first order.
func ParseCloudInit(source, text string) (*CloudInit, error) {
	t, err := nodetemplate.Parse(source, text, templateFuncs())
	if err != nil {
		return nil, err
	}
	c := &CloudInit{tmpl: t, source: source}
	sid := secret.New("sample-secret-id-for-template-check") // a placeholder, not a credential
	defer sid.Forget()
	for _, cfg := range sampleConfigs(sid) {
		if _, err := c.Render(cfg); err != nil {
			return nil, fmt.Errorf("does not render for a %s %s node (%s bootstrap): %w", cfg.kind(), cfg.Role, cfg.Bootstrap, err)
		}
	}
	return c, nil
}

func (n *NodeConfig) kind() string {
	if n.Initial {
		return "initial"
	}
	return "joining"
}

var (
	nameRe      = &lazyRegexp{pattern: `^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`}
	vaultPathRe = &lazyRegexp{pattern: `^[A-Za-z0-9_-]+(/[A-Za-z0-9_.-]+)*$`}
	labelRe     = &lazyRegexp{pattern: `^[A-Za-z0-9._/-]*$`}
	deviceRe    = &lazyRegexp{pattern: `^/dev/[a-z]{2,4}[b-z]$`}
	urlRe       = &lazyRegexp{pattern: `^https?://[A-Za-z0-9.:\[\]-]+(/[A-Za-z0-9._~/-]*)?$`}
)

// check refuses data that would make a broken or unsafe node configuration.
func (n *NodeConfig) check() error {
	switch {
	case !nameRe.get().MatchString(n.NodeName):
		return fmt.Errorf("node name %q is not a DNS label", n.NodeName)
	case n.Role != "server" && n.Role != "agent":
		return fmt.Errorf("role %q is not server or agent", n.Role)
	case n.Initial && n.Role != "server":
		return fmt.Errorf("only a server can be the initial node")
	case n.Bootstrap != BootstrapRancher && n.Bootstrap != BootstrapRKE2:
		return fmt.Errorf("bootstrap %q is not rancher or rke2", n.Bootstrap)
	case !urlRe.get().MatchString(n.VaultAddr):
		return fmt.Errorf("vault address %q is not an http(s) URL", n.VaultAddr)
	case n.VaultRoleID == "" || n.VaultSecretID.IsZero() || n.VaultKVDataPath == "" || n.VaultAppRoleMount == "":
		return fmt.Errorf("vault role id, secret id, approle mount and token path are required")
	case !vaultPathRe.get().MatchString(n.VaultAppRoleMount) || !vaultPathRe.get().MatchString(n.VaultKVDataPath):
		return fmt.Errorf("vault approle mount %q and token path %q must be plain paths", n.VaultAppRoleMount, n.VaultKVDataPath)
	case n.Bootstrap == BootstrapRancher && !urlRe.get().MatchString(n.RancherURL):
		return fmt.Errorf("rancher URL %q is not an http(s) URL", n.RancherURL)
	case n.Bootstrap == BootstrapRKE2 && !urlRe.get().MatchString(n.RKE2InstallURL):
		return fmt.Errorf("RKE2 install URL %q is not an http(s) URL", n.RKE2InstallURL)
	case n.Bootstrap == BootstrapRKE2 && n.Initial != (n.ServerURL == ""):
		return fmt.Errorf("the initial server has no server URL and every joining node has one (got %q)", n.ServerURL)
	case n.Bootstrap == BootstrapRKE2 && n.ServerURL != "" && (!urlRe.get().MatchString(n.ServerURL) || !strings.HasSuffix(n.ServerURL, ":9345")):
		return fmt.Errorf("server URL %q must point at the supervisor port 9345", n.ServerURL)
	}
	return n.checkPlain()
}

// checkPlain refuses labels and disks that a template inserts unquoted.
func (n *NodeConfig) checkPlain() error {
	for k, v := range n.Labels {
		if !labelRe.get().MatchString(k) || !labelRe.get().MatchString(v) {
			return fmt.Errorf("node label %q=%q has characters a label cannot have", k, v)
		}
	}
	for _, d := range n.Disks {
		if !deviceRe.get().MatchString(d.Device) || !filesystemRe.get().MatchString(d.Filesystem) || !mountPointRe.get().MatchString(d.MountPoint) {
			return fmt.Errorf("data disk %q (%q at %q) is not a device, filesystem and absolute mount point", d.Device, d.Filesystem, d.MountPoint)
		}
	}
	return nil
}

// Render produces a node's user data. The result is checked: a #cloud-config document must be
// YAML, and it must fit Nova's 64 KiB limit.
func (c *CloudInit) Render(cfg NodeConfig) (UserData, error) {
	if err := cfg.check(); err != nil {
		return UserData{}, fmt.Errorf("cloud-init for %s: %w", cfg.NodeName, err)
	}
	var buf bytes.Buffer
	if err := c.tmpl.Execute(&buf, &cfg); err != nil {
		return UserData{}, fmt.Errorf("cloud-init template %s: %s", c.source, secret.Scrub(err.Error()))
	}
	out := buf.Bytes()
	switch {
	case bytes.HasPrefix(out, []byte("#cloud-config\n")):
		var doc map[string]any
		if err := yaml.Unmarshal(out, &doc); err != nil {
			return UserData{}, fmt.Errorf("cloud-init template %s: the result is not YAML: %s", c.source, secret.Scrub(err.Error()))
		}
	case bytes.HasPrefix(out, []byte("#!")):
	default:
		return UserData{}, fmt.Errorf("cloud-init template %s: the result must start with #cloud-config or #!", c.source)
	}
	if n := base64.StdEncoding.EncodedLen(len(out)); n > maxUserData {
		return UserData{}, fmt.Errorf("cloud-init for %s is %d bytes base64-encoded, over Nova's %d", cfg.NodeName, n, maxUserData)
	}
	return UserData{b: out}, nil
}

// sampleConfigs are the node kinds every template must render.
func sampleConfigs(sid secret.Secret) []NodeConfig {
	base := NodeConfig{ClusterName: "sample", Bootstrap: BootstrapRancher, K8sVersion: DefaultK8sVersion, DataDir: StorageMountPoint,
		VaultAddr: "https://vault.example.com:8200", VaultAppRoleMount: "approle", VaultRoleID: "role-id",
		VaultSecretID: secret.Secret{}, VaultKVDataPath: "secret/data/rancher/cluster-sample",
		RancherURL: "https://rancher.example.com", RKE2InstallURL: "https://get.rke2.io",
		Labels: map[string]string{LabelRole: "server"},
		Disks:  Disks("sd", []DataVolume{{MountPoint: StorageMountPoint, Filesystem: StorageFilesystem}})}
	var out []NodeConfig
	for _, mode := range []string{BootstrapRancher, BootstrapRKE2} {
		for _, k := range []struct {
			role    string
			initial bool
		}{{"server", true}, {"server", false}, {"agent", false}} {
			c := base
			c.Bootstrap, c.Role, c.Initial = mode, k.role, k.initial
			c.NodeName = "sample-" + k.role
			c.VaultSecretID = sid
			if !k.initial && mode == BootstrapRKE2 {
				c.ServerURL = "https://192.0.2.10:9345"
			}
			if mode == BootstrapRKE2 {
				c.PrivateRegistryHost, c.RegistryConfig = "registry.example.com", true
			}
			out = append(out, c)
		}
	}
	return out
}

// templateFuncs are the functions cloud-init templates may call besides the built-in ones (built
// per parse, not at start-up: most agents have no rke2 offering).
func templateFuncs() map[string]nodetemplate.Func {
	return map[string]nodetemplate.Func{
		"quote": nodetemplate.String("quote", yamlQuote),
		"shq":   nodetemplate.String("shq", func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }),
		"reveal": func(args ...any) (any, error) {
			if len(args) != 1 {
				return nil, fmt.Errorf("wrong number of args for reveal: want 1 got %d", len(args))
			}
			s, ok := args[0].(secret.Secret)
			if !ok {
				return nil, fmt.Errorf("wrong type for value; expected secret.Secret; got %T", args[0])
			}
			return s.Reveal(), nil
		},
	}
}

// yamlQuote writes s as a double-quoted scalar (JSON's escapes are YAML's; no HTML escaping).
func yamlQuote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
