package vclusters

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/rawbytes"
	"github.com/knadh/koanf/v2"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadConfigLayersFileEnvironmentAndFlags(t *testing.T) {
	kc := writeFile(t, "kubeconfig", "apiVersion: v1\nkind: Config\n")
	file := writeFile(t, "vc.yaml", `
listen: 127.0.0.1:9191
rancher:
  url: https://rancher.example.com
template:
  nodes: 5
  node_capacity: {cpu: "8", memory: 32Gi}
tunnel:
  backoff_max: 5s
main_api:
  kubeconfig: `+kc+`
kwok: {mode: "off"} # the default (run) needs KWOK built, which tier 1 does not
`)
	cfg, err := LoadConfig(file, []string{"SITE_AGENT_VC_RANCHER_TOKEN=token-abc:secret", "SITE_AGENT_VC_LISTEN=127.0.0.1:9292"},
		map[string]any{"listen": "127.0.0.1:9393"})
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case cfg.Listen != "127.0.0.1:9393": // flags win over the environment and the file
		t.Errorf("listen %s", cfg.Listen)
	case cfg.Rancher.Token.Reveal() != "token-abc:secret":
		t.Errorf("token from the environment not read")
	case cfg.Template.Nodes != 5 || cfg.Template.Pods != 10:
		t.Errorf("template %+v", cfg.Template)
	case len(cfg.Template.NodeCapacity) != 2: // a map from the file replaces the default map
		t.Errorf("node capacity %v", cfg.Template.NodeCapacity)
	case cfg.Tunnel.BackoffMax != 5*time.Second || cfg.Tunnel.BackoffMin != 500*time.Millisecond:
		t.Errorf("tunnel %+v", cfg.Tunnel)
	case cfg.Template.alloc.Cpu().String() != "8": // allocatable defaults to capacity
		t.Errorf("allocatable %v", cfg.Template.alloc)
	}
	if strings.Contains(cfg.Rancher.Token.String(), "secret") {
		t.Error("token prints")
	}
}

func TestLoadConfigNamesTheBadKey(t *testing.T) {
	kc := writeFile(t, "kubeconfig", "apiVersion: v1\nkind: Config\n")
	exe := writeFile(t, "bin", "#!/bin/sh\n")
	_ = os.Chmod(exe, 0o755)
	base := "rancher: {url: https://r.example, token: 'token-a:b'}\nmain_api: {kubeconfig: " + kc + "}\n"
	for _, tc := range []struct{ yaml, key string }{
		{base + "listne: 127.0.0.1:1\n", "listne"},
		{base + "template: {nodez: 3}\n", "template.nodez"},
		{base + "listen: 0.0.0.0:9090\n", "listen"},
		{base + "log_level: loud\n", "log_level"},
		{base + "template: {nodes: 0}\n", "template.nodes"},
		{base + "template: {control_planes: 4}\n", "template.control_planes"},
		{base + "template: {node_capacity: {cpu: lots}}\n", "template.node_capacity.cpu"},
		{base + "template: {pod_requests: {memory: -1Gi}}\n", "template.pod_requests.memory"},
		{base + "template: {pod_limits: {cpu: '1e-2000000000'}}\n", "template.pod_limits.cpu"},
		{base + "template: {node_allocatable: {memory: 10Ei}}\n", "template.node_allocatable.memory"},
		{base + "tunnel: {backoff_min: 2s, backoff_max: 1s}\n", "tunnel.backoff_max"},
		{base + "proxy: {port_base: 65000, port_count: 1000}\n", "proxy.port_base"},
		{base + "sync: {deletion_interval: 10ms}\n", "sync"},
		{base + "setup_concurrency: 0\n", "setup_concurrency"},
		{base + "kwok: {mode: sometimes}\n", "kwok.mode"},
		{base + "kwok: {mode: run, binary: /nope/kwok}\n", "kwok.binary"},
		{base + "kwok: {mode: run, binary: " + exe + ", node_lease_duration: 1s}\n", "kwok.node_lease_duration"},
		{base + "kwok: {mode: run, binary: " + exe + ", pod_cidr: ten}\n", "kwok.pod_cidr"},
		{base + "kwok: {mode: run, binary: " + exe + ", pod_start_latency: -1s}\n", "kwok.pod_start_latency"},
		{"rancher: {url: https://r.example, token: 'token-a:b'}\n", "main_api"},
		{"rancher: {url: https://r.example, token: 'token-a:b'}\nmain_api: {kubeconfig: /nope}\n", "main_api.kubeconfig"},
		{"rancher: {url: https://r.example, token: 'token-a:b'}\nmain_api: {kubeconfig: " + kc + ", start: {kube_apiserver: " + exe + "}}\n", "main_api"},
		{"rancher: {url: https://r.example, token: 'token-a:b'}\nmain_api: {start: {kube_apiserver: " + exe + "}}\n", "main_api.start.etcd"},
		{"rancher: {url: https://r.example, token: 'token-a:b'}\nmain_api: {start: {kube_apiserver: " + kc + ", etcd: " + exe + "}}\n", "main_api.start.kube_apiserver"},
		{"rancher: {token: 'token-a:b'}\nmain_api: {kubeconfig: " + kc + "}\n", "rancher.url"},
		{"rancher: {url: rancher.example}\nmain_api: {kubeconfig: " + kc + "}\n", "rancher.url"},
		{"rancher: {url: https://r.example}\nmain_api: {kubeconfig: " + kc + "}\n", "rancher.token"},
		{"rancher: {url: https://r.example, token: nocolon}\nmain_api: {kubeconfig: " + kc + "}\n", "rancher.token"},
		{"rancher: {url: https://r.example, token: 'token-a:b', ca_file: /nope}\nmain_api: {kubeconfig: " + kc + "}\n", "rancher.ca_file"},
	} {
		_, err := LoadConfig(writeFile(t, "c.yaml", tc.yaml), nil, nil)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != tc.key {
			t.Errorf("%q: error %v, want one naming %s", tc.yaml, err, tc.key)
		}
	}
	if _, err := LoadConfig("/does/not/exist.yaml", nil, nil); err == nil {
		t.Error("a missing file was accepted")
	}
	if _, err := LoadConfig(writeFile(t, "c.yaml", "listen: [\n"), nil, nil); err == nil || !strings.Contains(err.Error(), "not valid YAML") {
		t.Errorf("broken YAML: %v", err)
	}
}

func TestExampleConfigurationHasEveryKeyWithItsDefault(t *testing.T) {
	k := koanfFile(t, "../../configs/virtual-clusters.yaml")
	got := Defaults()
	if err := decode(k, &got); err != nil {
		t.Fatalf("configs/virtual-clusters.yaml: %v", err)
	}
	want := Defaults()
	want.StateDir, want.MainAPI.Kubeconfig, want.Rancher.URL = got.StateDir, got.MainAPI.Kubeconfig, got.Rancher.URL
	if !strings.HasSuffix(got.Kwok.Binary, "/.cache/site-agent/kwok/v0.8.0/kwok") {
		t.Errorf("kwok.binary %q", got.Kwok.Binary)
	}
	want.Kwok.Binary = got.Kwok.Binary
	if !strings.HasSuffix(got.StateDir, "virtual-clusters") {
		t.Errorf("state_dir %q", got.StateDir)
	}
	want.Template.NodeAllocatable, want.Template.NodeLabels, want.Template.PodLimits = map[string]string{}, map[string]string{}, map[string]string{}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the example's values differ from the defaults:\n got %+v\nwant %+v", got, want)
	}
}

func koanfFile(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k := koanf.New(".")
	if err := k.Load(rawbytes.Provider(data), yaml.Parser()); err != nil {
		t.Fatal(err)
	}
	return k.Raw()
}

func TestHomeIsExpanded(t *testing.T) {
	home, _ := os.UserHomeDir()
	if got := expandHome("~/x/y"); got != filepath.Join(home, "x", "y") {
		t.Errorf("expandHome: %s", got)
	}
	if got := expandHome("/abs/~/x"); got != "/abs/~/x" {
		t.Errorf("expandHome changed %s", got)
	}
}
