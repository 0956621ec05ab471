package nodeemu

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Stand-in names: Rancher serves its installer at /system-agent-install.sh (rancher v2.12.0
// pkg/installer, SystemAgentInstallPath); the RKE2 installer is whatever rke2_install_url serves.
const (
	SystemAgentInstaller = "system-agent-install.sh"
	RKE2Installer        = "rke2-install.sh"
)

// rke2Config is where RKE2 reads its configuration (rke2 docs: configuration file).
const rke2Config = "/etc/rancher/rke2/config.yaml"

// Installed is what a node's bootstrap script installed, read from the stand-ins' calls and
// the files it wrote — what the system agent or RKE2 would start with.
type Installed struct {
	Boot              // node name, role, mode, join server, Rancher URL, labels
	Token      string // registration token (rancher) or join token (rke2)
	Version    string // INSTALL_RKE2_VERSION (rke2)
	Manifest   []byte // Rancher's import manifest in RKE2's auto-deploy directory (rke2 servers)
	Registries string // /etc/rancher/rke2/registries.yaml (rke2)
}

// Installed reads what the run installed: the system agent (its installer's arguments) or RKE2
// (the installer's environment, systemctl enabling the unit, config.yaml, registries.yaml and
// the auto-deploy manifests).
func (r *Run) Installed() (Installed, error) {
	var progs []string
	for _, c := range r.Calls {
		progs = append(progs, c.Prog)
	}
	switch strings.Join(progs, " ") {
	case SystemAgentInstaller:
		return systemAgent(r.Calls[0])
	case RKE2Installer + " systemctl":
		return r.rke2(r.Calls[0], r.Calls[1])
	}
	return Installed{}, fmt.Errorf("the script ran %q, not one installer (then systemctl for RKE2)", progs)
}

// systemAgent reads system-agent-install.sh's arguments (rancher/system-agent install.sh).
func systemAgent(c Call) (Installed, error) {
	in := Installed{Boot: Boot{Mode: "rancher", Labels: map[string]string{}}}
	roles := map[string]bool{}
	for i := 0; i < len(c.Args); i++ {
		flag, val := c.Args[i], ""
		switch flag {
		case "--etcd", "--controlplane", "--worker":
			roles[strings.TrimPrefix(flag, "--")] = true
			continue
		case "--server", "--token", "--node-name", "--ca-checksum", "--label":
			if i+1 == len(c.Args) {
				return in, fmt.Errorf("%s: %s needs a value", SystemAgentInstaller, flag)
			}
			i++
			val = c.Args[i]
		default:
			return in, fmt.Errorf("%s: unknown argument %q", SystemAgentInstaller, flag)
		}
		switch flag {
		case "--server":
			in.RancherURL = val
		case "--token":
			in.Token = val
		case "--node-name":
			in.NodeName = val
		case "--label":
			k, v, ok := strings.Cut(val, "=")
			if !ok {
				return in, fmt.Errorf("%s: label %q is not key=value", SystemAgentInstaller, val)
			}
			in.Labels[k] = v
		}
	}
	switch {
	case roles["etcd"] && roles["controlplane"] && !roles["worker"]:
		in.Role = "server"
	case roles["worker"] && !roles["etcd"] && !roles["controlplane"]:
		in.Role = "agent"
	default:
		return in, fmt.Errorf("%s: roles %v are neither etcd+controlplane nor worker", SystemAgentInstaller, roles)
	}
	if in.RancherURL == "" || in.Token == "" || in.NodeName == "" || c.Env["CATTLE_AGENT_VAR_DIR"] == "" {
		return in, fmt.Errorf("%s: --server, --token, --node-name or CATTLE_AGENT_VAR_DIR missing", SystemAgentInstaller)
	}
	return in, nil
}

// rke2Conf is the part of config.yaml the emulator acts on.
type rke2Conf struct {
	Token     string   `yaml:"token"`
	Server    string   `yaml:"server"`
	NodeName  string   `yaml:"node-name"`
	DataDir   string   `yaml:"data-dir"`
	Registry  string   `yaml:"system-default-registry"`
	NodeLabel []string `yaml:"node-label"`
}

// rke2 reads an RKE2 install: the installer ran with INSTALL_RKE2_TYPE and a version, then
// `systemctl enable --now rke2-<type>.service` started it with config.yaml (0600: it holds the
// token) and, when written, registries.yaml (0600).
func (r *Run) rke2(install, systemctl Call) (Installed, error) {
	typ := install.Env["INSTALL_RKE2_TYPE"]
	in := Installed{Boot: Boot{Mode: "rke2", Role: typ, Labels: map[string]string{}}, Version: install.Env["INSTALL_RKE2_VERSION"]}
	if (typ != "server" && typ != "agent") || in.Version == "" {
		return in, fmt.Errorf("%s: INSTALL_RKE2_TYPE %q, INSTALL_RKE2_VERSION %q", RKE2Installer, typ, in.Version)
	}
	if want := []string{"enable", "--now", "rke2-" + typ + ".service"}; strings.Join(systemctl.Args, " ") != strings.Join(want, " ") {
		return in, fmt.Errorf("systemctl %q, want %q", systemctl.Args, want)
	}
	var conf rke2Conf
	if err := r.yamlFile(rke2Config, &conf); err != nil {
		return in, err
	}
	in.Token, in.ServerURL, in.NodeName = conf.Token, conf.Server, conf.NodeName
	for _, l := range conf.NodeLabel {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return in, fmt.Errorf("%s: node-label %q is not key=value", rke2Config, l)
		}
		in.Labels[k] = v
	}
	if in.Token == "" || in.NodeName == "" || !path.IsAbs(conf.DataDir) {
		return in, fmt.Errorf("%s: token, node-name or an absolute data-dir missing", rke2Config)
	}
	if err := r.registries(&in); err != nil {
		return in, err
	}
	if typ == "server" {
		return in, r.manifests(&in, conf.DataDir)
	}
	return in, nil
}

// yamlFile decodes a file of the node that only root may read (0600).
func (r *Run) yamlFile(p string, out any) error {
	if m, err := r.Mode(p); err != nil || m != 0o600 {
		return fmt.Errorf("%s: mode %v (%v), want 0600", p, m, err)
	}
	b, err := r.File(p)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return nil
}

func (r *Run) registries(in *Installed) error {
	const p = "/etc/rancher/rke2/registries.yaml"
	if !r.Exists(p) {
		return nil
	}
	var doc map[string]any
	if err := r.yamlFile(p, &doc); err != nil {
		return err
	}
	if doc["mirrors"] == nil && doc["configs"] == nil {
		return fmt.Errorf("%s has neither mirrors nor configs", p)
	}
	b, _ := r.File(p)
	in.Registries, in.RegistryConfig = string(b), true
	return nil
}

// manifests reads Rancher's import manifest from RKE2's auto-deploy directory
// (<data-dir>/server/manifests).
func (r *Run) manifests(in *Installed, dataDir string) error {
	b, err := r.File(path.Join(dataDir, "server", "manifests", "rancher-import.yaml"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	in.Manifest, in.ImportManifest = b, true
	return nil
}
