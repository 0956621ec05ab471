package vclusters

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
	"github.com/waldur/site-agent/internal/secret"
)

// Config is the virtual-clusters configuration (file, SITE_AGENT_VC_* environment, flags).
type Config struct {
	Listen string `koanf:"listen"`
	// APIToken, when set, is the bearer token every API request must carry.
	APIToken         secret.Secret  `koanf:"api_token"`
	StateDir         string         `koanf:"state_dir"`
	LogLevel         string         `koanf:"log_level"`
	Pprof            bool           `koanf:"pprof"`
	SetupConcurrency int            `koanf:"setup_concurrency"`
	MainAPI          MainAPIConfig  `koanf:"main_api"`
	Rancher          RancherConfig  `koanf:"rancher"`
	Template         TemplateConfig `koanf:"template"`
	Proxy            ProxyConfig    `koanf:"proxy"`
	Tunnel           TunnelConfig   `koanf:"tunnel"`
	Sync             SyncConfig     `koanf:"sync"`
	Kwok             KwokConfig     `koanf:"kwok"`
}

// Kubelet stand-in modes (kwok.mode).
const (
	KwokRun      = "run"      // the tool runs KWOK against the main API server
	KwokExternal = "external" // a KWOK already manages kwok.x-k8s.io/node=fake Nodes there (kwokctl)
	KwokOff      = "off"      // none: the tool writes Node status once, Pods stay Pending
)

// KwokConfig is the kubelet stand-in of the main API server; the delays default to KWOK's fast
// stages.
type KwokConfig struct {
	Mode   string `koanf:"mode"`
	Binary string `koanf:"binary"`
	// NodeLeaseDuration is the Nodes' Lease duration; KWOK renews each Lease every quarter of it
	// (the heartbeat the node-lifecycle controller watches).
	NodeLeaseDuration time.Duration `koanf:"node_lease_duration"`
	// NodeStatusInterval (+ up to NodeStatusJitter) is how often a Node's status heartbeat is
	// refreshed besides its Lease.
	NodeStatusInterval time.Duration `koanf:"node_status_interval"`
	NodeStatusJitter   time.Duration `koanf:"node_status_jitter"`
	// PodStartLatency (+ up to PodStartJitter) is how long a bound Pod stays Pending.
	PodStartLatency time.Duration `koanf:"pod_start_latency"`
	PodStartJitter  time.Duration `koanf:"pod_start_jitter"`
	PodCIDR         string        `koanf:"pod_cidr"`
}

// manages reports whether a kubelet stand-in runs (KWOK, the tool's or an external one).
func (k KwokConfig) manages() bool { return k.Mode != KwokOff }

// MainAPIConfig says where the virtual clusters live: an existing API server (Kubeconfig) or
// one the tool starts from binaries (Start).
type MainAPIConfig struct {
	Kubeconfig string      `koanf:"kubeconfig"`
	Context    string      `koanf:"context"`
	Start      StartConfig `koanf:"start"`
}

// StartConfig names the binaries of a main API server the tool runs itself.
type StartConfig struct {
	KubeAPIServer         string `koanf:"kube_apiserver"`
	Etcd                  string `koanf:"etcd"`
	KubeControllerManager string `koanf:"kube_controller_manager"`
	Port                  int    `koanf:"port"`
	EtcdNoFsync           bool   `koanf:"etcd_unsafe_no_fsync"`
	// NodeMonitorGracePeriod: the node-lifecycle controller marks a Node NotReady after this
	// long without a heartbeat.
	NodeMonitorGracePeriod time.Duration `koanf:"node_monitor_grace_period"`
}

// RancherConfig is the Rancher server the clusters are imported into.
type RancherConfig struct {
	URL      string        `koanf:"url"`
	Token    secret.Secret `koanf:"token"` // "token-xxxxx:secret" API key
	CAFile   string        `koanf:"ca_file"`
	Insecure bool          `koanf:"insecure"`
	Timeout  time.Duration `koanf:"timeout"`
}

// TemplateConfig shapes every virtual cluster.
type TemplateConfig struct {
	Nodes           int               `koanf:"nodes"`
	ControlPlanes   int               `koanf:"control_planes"`
	Pods            int               `koanf:"pods"`
	NodeCapacity    map[string]string `koanf:"node_capacity"`
	NodeAllocatable map[string]string `koanf:"node_allocatable"`
	NodeLabels      map[string]string `koanf:"node_labels"`
	PodRequests     map[string]string `koanf:"pod_requests"`
	PodLimits       map[string]string `koanf:"pod_limits"`
	PodImage        string            `koanf:"pod_image"`
	KubeletVersion  string            `koanf:"kubelet_version"`

	capacity, alloc  corev1.ResourceList // parsed by validate
	requests, limits corev1.ResourceList
}

// ProxyConfig places the per-cluster API proxies.
type ProxyConfig struct {
	PortBase   int  `koanf:"port_base"`
	PortCount  int  `koanf:"port_count"`
	ScopeNodes bool `koanf:"scope_nodes"`
}

// TunnelConfig tunes the remotedialer sessions.
type TunnelConfig struct {
	Steve       bool          `koanf:"steve"`
	BackoffMin  time.Duration `koanf:"backoff_min"`
	BackoffMax  time.Duration `koanf:"backoff_max"`
	ConnectRate float64       `koanf:"connect_rate"`
	Concurrency int           `koanf:"connect_concurrency"`
}

// SyncConfig sets the steady-state loops.
type SyncConfig struct {
	DeletionInterval     time.Duration `koanf:"deletion_interval"`
	NodeStatusInterval   time.Duration `koanf:"node_status_interval"`
	PodResourcesInterval time.Duration `koanf:"pod_resources_interval"`
	TokenWait            time.Duration `koanf:"token_wait"`
	RancherRemovalWait   time.Duration `koanf:"rancher_removal_wait"`
	PodDeletionWait      time.Duration `koanf:"pod_deletion_wait"`
}

// Defaults returns the configuration before the file, environment and flags.
func Defaults() Config {
	home, _ := os.UserHomeDir()
	return Config{
		Listen: "127.0.0.1:9090", StateDir: filepath.Join(home, ".site-agent", "virtual-clusters"), LogLevel: "info",
		SetupConcurrency: 8,
		Rancher:          RancherConfig{Timeout: 30 * time.Second},
		Template: TemplateConfig{Nodes: 3, ControlPlanes: 1, Pods: 10, PodImage: "registry.k8s.io/pause:3.10",
			KubeletVersion: "v1.36.3-kwok",
			NodeCapacity:   map[string]string{"cpu": "16", "memory": "64Gi", "pods": "110", "ephemeral-storage": "200Gi"},
			PodRequests:    map[string]string{"cpu": "100m", "memory": "128Mi"}},
		Proxy:   ProxyConfig{PortBase: 8440, PortCount: 2000, ScopeNodes: true},
		Tunnel:  TunnelConfig{Steve: true, BackoffMin: 500 * time.Millisecond, BackoffMax: 15 * time.Second, ConnectRate: 50, Concurrency: 32},
		MainAPI: MainAPIConfig{Start: StartConfig{NodeMonitorGracePeriod: 40 * time.Second}},
		Kwok: KwokConfig{Mode: KwokRun, Binary: filepath.Join(home, ".cache", "site-agent", "kwok", "v0.8.0", "kwok"),
			NodeLeaseDuration: 40 * time.Second, NodeStatusInterval: 600 * time.Second, NodeStatusJitter: 610 * time.Second,
			PodCIDR: "10.64.0.1/10"},
		Sync: SyncConfig{DeletionInterval: 30 * time.Second, NodeStatusInterval: time.Minute, PodResourcesInterval: 15 * time.Second,
			TokenWait: 15 * time.Second, RancherRemovalWait: 2 * time.Minute, PodDeletionWait: 30 * time.Second},
	}
}

// ConfigError is an invalid setting: Key names it.
type ConfigError struct {
	Key, Problem string
}

func (e *ConfigError) Error() string { return "invalid configuration: " + e.Key + ": " + e.Problem }

func bad(key, format string, args ...any) error {
	return &ConfigError{Key: key, Problem: fmt.Sprintf(format, args...)}
}

// Validate checks every setting without touching the network and prepares the parsed
// quantities; the first problem is returned, naming its key.
func (c *Config) Validate() error {
	if err := validLoopback("listen", c.Listen); err != nil {
		return err
	}
	if t := c.APIToken.Reveal(); t != "" && (len(t) < 16 || strings.ContainsAny(t, " \t\r\n")) {
		return bad("api_token", "must be at least 16 characters without spaces (e.g. openssl rand -hex 24)")
	}
	if _, err := zapcore.ParseLevel(c.LogLevel); err != nil {
		return bad("log_level", "must be debug, info, warn or error, got %q", c.LogLevel)
	}
	if strings.TrimSpace(c.StateDir) == "" {
		return bad("state_dir", "must not be empty")
	}
	if c.SetupConcurrency < 1 || c.SetupConcurrency > 256 {
		return bad("setup_concurrency", "must be between 1 and 256, got %d", c.SetupConcurrency)
	}
	for _, check := range []func() error{c.validateMainAPI, c.validateRancher, c.Template.validate, c.validateLoops, c.Kwok.validate} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func validLoopback(key, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return bad(key, "must be host:port, got %q", addr)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return bad(key, "must be a loopback address (the API is plain HTTP), got %q", addr)
	}
	return nil
}

func (c *Config) validateMainAPI() error {
	m, s := c.MainAPI, c.MainAPI.Start
	switch {
	case m.Kubeconfig != "" && s.KubeAPIServer != "":
		return bad("main_api", "set either kubeconfig or start.kube_apiserver, not both")
	case m.Kubeconfig == "" && s.KubeAPIServer == "":
		return bad("main_api", "set kubeconfig (an existing API server) or start.kube_apiserver and start.etcd (binaries to run)")
	case m.Kubeconfig != "":
		return fileExists("main_api.kubeconfig", m.Kubeconfig)
	}
	if s.Etcd == "" {
		return bad("main_api.start.etcd", "is required with start.kube_apiserver")
	}
	for key, path := range map[string]string{"main_api.start.kube_apiserver": s.KubeAPIServer, "main_api.start.etcd": s.Etcd,
		"main_api.start.kube_controller_manager": s.KubeControllerManager} {
		if path == "" {
			continue
		}
		if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode().Perm()&0o111 == 0 {
			return bad(key, "%q is not an executable file", path)
		}
	}
	if s.Port < 0 || s.Port > 65535 {
		return bad("main_api.start.port", "must be a port number, got %d", s.Port)
	}
	if s.NodeMonitorGracePeriod < time.Second {
		return bad("main_api.start.node_monitor_grace_period", "must be at least 1s")
	}
	return nil
}

func (k KwokConfig) validate() error {
	switch k.Mode {
	case KwokRun:
		if st, err := os.Stat(k.Binary); err != nil || st.IsDir() || st.Mode().Perm()&0o111 == 0 {
			return bad("kwok.binary", "%q is not an executable file (build it with scripts/kwok/build.sh, or set kwok.mode external or off)", k.Binary)
		}
	case KwokExternal, KwokOff:
		return nil
	default:
		return bad("kwok.mode", "must be run, external or off, got %q", k.Mode)
	}
	switch {
	case k.NodeLeaseDuration < 4*time.Second:
		return bad("kwok.node_lease_duration", "must be at least 4s (KWOK renews every quarter of it)")
	case k.NodeStatusInterval < time.Second || k.NodeStatusJitter < 0:
		return bad("kwok.node_status_interval", "must be at least 1s, with a non-negative node_status_jitter")
	case k.PodStartLatency < 0 || k.PodStartJitter < 0:
		return bad("kwok.pod_start_latency", "pod_start_latency and pod_start_jitter must not be negative")
	}
	if _, _, err := net.ParseCIDR(k.PodCIDR); err != nil {
		return bad("kwok.pod_cidr", "must be IP/prefix, got %q", k.PodCIDR)
	}
	return nil
}

func fileExists(key, path string) error {
	if st, err := os.Stat(path); err != nil || st.IsDir() {
		return bad(key, "%q is not a readable file", path)
	}
	return nil
}

func (c *Config) validateRancher() error {
	r := c.Rancher
	u, err := url.Parse(r.URL)
	switch {
	case r.URL == "":
		return bad("rancher.url", "is required")
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return bad("rancher.url", "must be an http(s) URL, got %q", r.URL)
	case r.Token.IsZero():
		return bad("rancher.token", "is required (an API key \"token-xxxxx:secret\"; or set SITE_AGENT_VC_RANCHER_TOKEN)")
	case !strings.Contains(r.Token.Reveal(), ":"):
		return bad("rancher.token", "must be an API key of the form access-key:secret-key")
	case r.Timeout <= 0:
		return bad("rancher.timeout", "must be positive")
	}
	if r.CAFile != "" {
		return fileExists("rancher.ca_file", r.CAFile)
	}
	return nil
}

func (c *Config) validateLoops() error {
	p, t, s := c.Proxy, c.Tunnel, c.Sync
	switch {
	case p.PortBase < 0 || p.PortBase > 65535 || (p.PortBase > 0 && p.PortBase+p.PortCount > 65536):
		return bad("proxy.port_base", "must leave room for port_count ports below 65536")
	case p.PortCount < 1:
		return bad("proxy.port_count", "must be positive")
	case t.BackoffMin <= 0 || t.BackoffMax < t.BackoffMin:
		return bad("tunnel.backoff_max", "backoff_min must be positive and backoff_max at least backoff_min")
	case t.ConnectRate <= 0 || t.Concurrency < 1:
		return bad("tunnel.connect_rate", "connect_rate and connect_concurrency must be positive")
	case s.DeletionInterval < time.Second || s.NodeStatusInterval < time.Second || s.PodResourcesInterval < time.Second:
		return bad("sync", "deletion_interval, node_status_interval and pod_resources_interval must be at least 1s")
	case s.TokenWait < 0:
		return bad("sync.token_wait", "must not be negative")
	case s.RancherRemovalWait < 0 || s.PodDeletionWait < 0:
		return bad("sync", "rancher_removal_wait and pod_deletion_wait must not be negative")
	}
	return nil
}

func (t *TemplateConfig) validate() error {
	switch {
	case t.Nodes < 1 || t.Nodes > 1000:
		return bad("template.nodes", "must be between 1 and 1000, got %d", t.Nodes)
	case t.ControlPlanes < 0 || t.ControlPlanes > t.Nodes:
		return bad("template.control_planes", "must be between 0 and template.nodes, got %d", t.ControlPlanes)
	case t.Pods < 0 || t.Pods > 10000:
		return bad("template.pods", "must be between 0 and 10000, got %d", t.Pods)
	case t.PodImage == "":
		return bad("template.pod_image", "must not be empty")
	}
	var err error
	if t.capacity, err = quantities("template.node_capacity", t.NodeCapacity); err != nil {
		return err
	}
	if len(t.capacity) == 0 {
		return bad("template.node_capacity", "must set at least cpu and memory")
	}
	if t.alloc, err = quantities("template.node_allocatable", t.NodeAllocatable); err != nil {
		return err
	}
	if len(t.alloc) == 0 {
		t.alloc = t.capacity.DeepCopy()
	}
	if t.requests, err = quantities("template.pod_requests", t.PodRequests); err != nil {
		return err
	}
	t.limits, err = quantities("template.pod_limits", t.PodLimits)
	return err
}

func quantities(key string, in map[string]string) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for name, v := range in {
		q, err := rancherapi.ParseQuantity(v)
		if err != nil {
			return nil, bad(key+"."+name, "%q is not a Kubernetes quantity: %v", v, err)
		}
		if q.Sign() < 0 {
			return nil, bad(key+"."+name, "must not be negative")
		}
		// Kubernetes counts in int64 thousandths; summing Pods' requests past that wraps.
		if _, ok := rancherapi.Scaled(q, resource.Milli); !ok {
			return nil, bad(key+"."+name, "%q is more than Kubernetes counts", v)
		}
		out[corev1.ResourceName(name)] = q
	}
	return out, nil
}
