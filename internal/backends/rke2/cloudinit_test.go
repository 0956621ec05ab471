package rke2

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"go.yaml.in/yaml/v3"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/secret"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/cloudinit")

const goldenSecretID = "5f1c2d3e-single-use-secret-id"

func goldenSettings(t *testing.T, kv ...any) *Settings {
	t.Helper()
	s, _, err := DecodeSettings(with(baseSettings(), kv...))
	if err != nil {
		t.Fatal(err)
	}
	return &s
}

func goldenSpec(t *testing.T, s *Settings) *ClusterSpec {
	t.Helper()
	spec, err := ParseSpec(s, backends.Resource{Name: "prod", Attributes: map[string]any{
		"name": "prod", "worker_nodes_count": 2.0, "worker_nodes_flavor_name": "m1.xlarge",
		"worker_nodes_data_volume_size": 102400.0, "install_longhorn": true, "worker_nodes_longhorn_volume_size": 204800.0,
	}})
	if err != nil {
		t.Fatal(err)
	}
	return &spec
}

func TestCloudInitGolden(t *testing.T) {
	creds := VaultCredentials{RoleID: "8a2b-role-id", SecretID: secret.New(goldenSecretID)}
	cases := []struct {
		file     string
		settings []any
		inv      Inventory
		server   string
	}{
		{"rancher-server-initial.yaml", nil, Inventory{Role: RoleServer, Initial: true, Index: 0}, ""},
		{"rancher-agent.yaml", []any{"private_registry_url", "https://registry.example.com:5000",
			"rancher_ca_checksum", strings.Repeat("ab", 32)}, Inventory{Role: RoleAgent, Index: 1, Join: "prod-server-0"}, ""},
		{"rke2-server-initial.yaml", []any{"bootstrap", "rke2"}, Inventory{Role: RoleServer, Initial: true}, ""},
		{"rke2-server-joining.yaml", []any{"bootstrap", "rke2", "private_registry_url", "https://registry.example.com:5000",
			"private_registry_user", "puller", "private_registry_password", "registry-password"},
			Inventory{Role: RoleServer, Index: 2, Join: "prod-server-0"}, "10.0.0.11"},
		{"rke2-agent.yaml", []any{"bootstrap", "rke2", "vault_tls_verify", false}, Inventory{Role: RoleAgent, Index: 0, Join: "prod-server-1"}, "10.0.0.12"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			s := goldenSettings(t, tc.settings...)
			spec := goldenSpec(t, s)
			tc.inv.Cluster, tc.inv.Stage = testCluster, StageInstall
			name := NodeName(spec.Name, tc.inv.Role, tc.inv.Index)
			ud, err := s.CloudInit().Render(NewNodeConfig(s, spec, name, tc.inv, creds, tc.server))
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "cloudinit", tc.file), ud.Bytes())
			checkCloudConfig(t, ud.Bytes(), tc.inv, spec)
		})
	}
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestCloudInitGolden -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the rendered cloud-init (go test -update rewrites it):\n%s", path, got)
	}
}

// checkCloudConfig checks the document's structure independently of the golden text.
func checkCloudConfig(t *testing.T, ud []byte, inv Inventory, spec *ClusterSpec) {
	t.Helper()
	var doc struct {
		DiskSetup  map[string]map[string]any        `yaml:"disk_setup"`
		FSSetup    []map[string]any                 `yaml:"fs_setup"`
		Mounts     [][]string                       `yaml:"mounts"`
		WriteFiles []struct{ Path, Content string } `yaml:"write_files"`
		RunCmd     [][]string                       `yaml:"runcmd"`
	}
	if err := yaml.Unmarshal(ud, &doc); err != nil {
		t.Fatal(err)
	}
	vols := spec.Node(inv.Role, inv.Index).DataVolumes
	if len(doc.DiskSetup) != len(vols) || len(doc.FSSetup) != len(vols) || len(doc.Mounts) != len(vols) {
		t.Fatalf("disk_setup/fs_setup/mounts for %d volumes: %+v", len(vols), doc)
	}
	for i, v := range vols {
		dev := fmt.Sprintf("/dev/sd%c", 'b'+i)
		if doc.DiskSetup[dev]["table_type"] != "gpt" || doc.FSSetup[i]["filesystem"] != v.Filesystem ||
			doc.Mounts[i][0] != dev+"1" || doc.Mounts[i][1] != v.MountPoint {
			t.Errorf("volume %d (%s at %s): %+v %+v %+v", i, dev, v.MountPoint, doc.DiskSetup[dev], doc.FSSetup[i], doc.Mounts[i])
		}
	}
	files := map[string]string{}
	for _, f := range doc.WriteFiles {
		files[f.Path] = f.Content
	}
	if files["/etc/vault/secret-id"] != goldenSecretID || files["/etc/vault/role-id"] != "8a2b-role-id" {
		t.Errorf("vault credential files: %q", files)
	}
	script := files["/usr/local/sbin/site-agent-node-bootstrap"]
	if strings.Count(string(ud), goldenSecretID) != 1 || strings.Contains(script, goldenSecretID) {
		t.Error("the secret id appears outside /etc/vault/secret-id")
	}
	if strings.Contains(string(ud), "registry-password") {
		t.Error("the registry password is in the user data")
	}
	if !strings.Contains(script, "rm -f /etc/vault/secret-id") || !strings.Contains(script, "/v1/secret/data/rancher/cluster-"+testCluster) {
		t.Errorf("script does not log in and read the token the expected way:\n%s", script)
	}
	if sh, err := exec.LookPath("sh"); err == nil { // the script must at least parse
		cmd := exec.Command(sh, "-n")
		cmd.Stdin = strings.NewReader(script)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("sh -n: %v: %s", err, out)
		}
	}
	if len(doc.RunCmd) != 1 || doc.RunCmd[0][0] != "/usr/local/sbin/site-agent-node-bootstrap" {
		t.Errorf("runcmd = %v", doc.RunCmd)
	}
}

func TestCloudInitModes(t *testing.T) {
	creds := VaultCredentials{RoleID: "r", SecretID: secret.New(goldenSecretID)}
	render := func(s *Settings, inv Inventory, server string) string {
		spec := goldenSpec(t, s)
		inv.Cluster, inv.Stage = testCluster, StageInstall
		ud, err := s.CloudInit().Render(NewNodeConfig(s, spec, NodeName("prod", inv.Role, inv.Index), inv, creds, server))
		if err != nil {
			t.Fatal(err)
		}
		return string(ud.Bytes())
	}
	rancher := goldenSettings(t)
	if out := render(rancher, Inventory{Role: RoleServer, Initial: true}, ""); !strings.Contains(out, "--etcd --controlplane") || strings.Contains(out, "--worker") {
		t.Error("a rancher server must install with --etcd --controlplane")
	}
	if out := render(rancher, Inventory{Role: RoleAgent}, ""); !strings.Contains(out, "--worker") || strings.Contains(out, "--etcd") {
		t.Error("a rancher agent must install with --worker")
	}
	rke2 := goldenSettings(t, "bootstrap", "rke2")
	if out := render(rke2, Inventory{Role: RoleServer, Initial: true}, ""); strings.Contains(out, "server: ") || !strings.Contains(out, "INSTALL_RKE2_TYPE=server") {
		t.Error("the initial rke2 server must have no server: line")
	}
	if out := render(rke2, Inventory{Role: RoleAgent, Join: "prod-server-0"}, "10.1.2.3"); !strings.Contains(out, "'https://10.1.2.3:9345'") || !strings.Contains(out, "INSTALL_RKE2_TYPE=agent") {
		t.Error("an rke2 agent must join through https://<server>:9345")
	}
	checkRKE2Import(t, render, rke2)
	checkRKE2Registries(t, render)
}

// checkRKE2Import: rke2 servers (initial and joining) put Rancher's import manifest into RKE2's
// auto-deploy directory, fetching it with the URL from Vault handed to curl through stdin;
// agents do not.
func checkRKE2Import(t *testing.T, render func(*Settings, Inventory, string) string, rke2 *Settings) {
	t.Helper()
	const dest = "'/opt/rke2_storage/rke2/server/manifests/rancher-import.yaml'"
	for _, inv := range []Inventory{{Role: RoleServer, Initial: true}, {Role: RoleServer, Index: 1, Join: "prod-server-0"}} {
		out := render(rke2, inv, map[bool]string{true: "", false: "10.1.2.3"}[inv.Initial])
		fetch := strings.Index(out, "-K - \\\n        -o "+dest)
		if !strings.Contains(out, `printf 'url = "%s"\n' "$import_url" | curl`) || fetch < 0 || fetch > strings.Index(out, "INSTALL_RKE2_TYPE") {
			t.Errorf("%s server: no import manifest fetched before RKE2 starts:\n%s", inv.Kind(), out)
		}
		if strings.Contains(out, `"$import_url" -`) || strings.Contains(out, `curl "$import_url"`) {
			t.Errorf("the import URL is on a command line")
		}
	}
	if out := render(rke2, Inventory{Role: RoleAgent, Join: "prod-server-0"}, "10.1.2.3"); strings.Contains(out, "import_url") {
		t.Error("an agent fetches the import manifest")
	}
}

// checkRKE2Registries: with a private registry, rke2 nodes write registries.yaml from Vault
// under umask 077 (0600) before RKE2 starts; without one, or with bootstrap rancher, not.
func checkRKE2Registries(t *testing.T, render func(*Settings, Inventory, string) string) {
	t.Helper()
	const write = `base64 -d > /etc/rancher/rke2/registries.yaml`
	reg := goldenSettings(t, "bootstrap", "rke2", "private_registry_url", "https://registry.example.com:5000",
		"private_registry_user", "puller", "private_registry_password", "registry-password")
	out := render(reg, Inventory{Role: RoleAgent, Join: "prod-server-0"}, "10.1.2.3")
	at := strings.Index(out, write)
	if at < 0 || at < strings.Index(out, "umask 077") || at > strings.Index(out, "INSTALL_RKE2_TYPE") || strings.Contains(out, "registry-password") {
		t.Errorf("registries.yaml not written from vault (0600, before RKE2):\n%s", out)
	}
	for _, s := range []*Settings{goldenSettings(t, "bootstrap", "rke2"), goldenSettings(t, "private_registry_url", "https://registry.example.com:5000")} {
		if out := render(s, Inventory{Role: RoleServer, Initial: true}, ""); strings.Contains(out, "registries") {
			t.Errorf("registries.yaml written with bootstrap %s, registry %q", s.Bootstrap, s.PrivateRegistryURL)
		}
	}
}

func TestCloudInitRefusesBadNodes(t *testing.T) {
	s := goldenSettings(t, "bootstrap", "rke2")
	spec := goldenSpec(t, s)
	creds := VaultCredentials{RoleID: "r", SecretID: secret.New(goldenSecretID)}
	joining := Inventory{Cluster: testCluster, Role: RoleServer, Stage: StageInstall, Index: 1, Join: "prod-server-0"}
	cases := map[string]NodeConfig{
		"joining without server": NewNodeConfig(s, spec, "prod-server-1", joining, creds, ""),
		"initial with server": func() NodeConfig {
			c := NewNodeConfig(s, spec, "prod-server-0", joining, creds, "10.0.0.1")
			c.Initial = true
			return c
		}(),
		"bad name":     NewNodeConfig(s, spec, "Prod_1", joining, creds, "10.0.0.1"),
		"no secret id": NewNodeConfig(s, spec, "prod-server-1", joining, VaultCredentials{RoleID: "r"}, "10.0.0.1"),
		"wrong port": func() NodeConfig {
			c := NewNodeConfig(s, spec, "prod-server-1", joining, creds, "10.0.0.1")
			c.ServerURL = "https://10.0.0.1:6443"
			return c
		}(),
		"shell injection in addr": NewNodeConfig(s, spec, "prod-server-1", joining, creds, "10.0.0.1';reboot;'"),
		"bad label": func() NodeConfig {
			c := NewNodeConfig(s, spec, "prod-server-1", joining, creds, "10.0.0.1")
			c.Labels["x"] = `a"b`
			return c
		}(),
		"bad mount": func() NodeConfig {
			c := NewNodeConfig(s, spec, "prod-server-1", joining, creds, "10.0.0.1")
			c.Disks[0].MountPoint = "/a b"
			return c
		}(),
		"bad kv path": func() NodeConfig {
			c := NewNodeConfig(s, spec, "prod-server-1", joining, creds, "10.0.0.1")
			c.VaultKVDataPath = "secret/$(id)"
			return c
		}(),
	}
	for name, cfg := range cases {
		if _, err := s.CloudInit().Render(cfg); err == nil {
			t.Errorf("%s: rendered", name)
		} else if strings.Contains(err.Error(), goldenSecretID) {
			t.Errorf("%s: error leaks the secret id: %v", name, err)
		}
	}
}

// TestUserDataNeverPrints: the rendered user data carries a secret id, so fmt, JSON and zap
// show only its size.
func TestUserDataNeverPrints(t *testing.T) {
	s := goldenSettings(t)
	spec := goldenSpec(t, s)
	inv := Inventory{Cluster: testCluster, Role: RoleAgent, Stage: StageInstall}
	ud, err := s.CloudInit().Render(NewNodeConfig(s, spec, "prod-agent-0", inv, VaultCredentials{RoleID: "r", SecretID: secret.New(goldenSecretID)}, ""))
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.DebugLevel)
	zap.New(core).Info("node created", zap.Any("user_data", ud), zap.Stringer("ud", ud))
	js, _ := json.Marshal(map[string]any{"ud": ud})
	text := fmt.Sprintf("%v %+v %#v %s %q %x", ud, ud, ud, ud, ud, ud) + string(js)
	for _, e := range logs.All() {
		for _, v := range e.ContextMap() {
			text += fmt.Sprint(v)
		}
	}
	if strings.Contains(text, goldenSecretID) || strings.Contains(text, "#cloud-config") {
		t.Errorf("user data printed: %s", text)
	}
}

func TestCustomTemplate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "site.tmpl")
	tmpl := "#!/bin/sh\n# {{ .NodeName }} {{ .Role }}\necho {{ shq (reveal .VaultSecretID) }} > /root/sid\n{{ if .ServerURL }}echo {{ shq .ServerURL }}{{ end }}\n"
	if err := os.WriteFile(path, []byte(tmpl), 0o600); err != nil {
		t.Fatal(err)
	}
	s := goldenSettings(t, "cloud_init_template_file", path, "bootstrap", "rke2")
	spec := goldenSpec(t, s)
	inv := Inventory{Cluster: testCluster, Role: RoleAgent, Stage: StageInstall, Join: "prod-server-0"}
	ud, err := s.CloudInit().Render(NewNodeConfig(s, spec, "prod-agent-0", inv, VaultCredentials{RoleID: "r", SecretID: secret.New(goldenSecretID)}, "10.0.0.5"))
	if err != nil {
		t.Fatal(err)
	}
	want := "#!/bin/sh\n# prod-agent-0 agent\necho '" + goldenSecretID + "' > /root/sid\necho 'https://10.0.0.5:9345'\n"
	if string(ud.Bytes()) != want {
		t.Errorf("got %q", ud.Bytes())
	}
	// A template that prints the secret without reveal gets [REDACTED], and one whose output is
	// neither cloud-config nor a script is refused at load.
	if _, err := ParseCloudInit("x", "#!/bin/sh\necho {{ .VaultSecretID }}\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseCloudInit("x", "hello {{ .NodeName }}\n"); err == nil || !strings.Contains(err.Error(), "#cloud-config") {
		t.Errorf("plain text accepted: %v", err)
	}
	if _, err := ParseCloudInit("x", "#cloud-config\nhostname: [{{ .NodeName }}\n"); err == nil || !strings.Contains(err.Error(), "not YAML") {
		t.Errorf("broken YAML accepted: %v", err)
	}
}

// TestParseCloudInitLeavesNoSecrets: checking a template registers its placeholder secret id
// with the scrubber only while it runs.
func TestParseCloudInitLeavesNoSecrets(t *testing.T) {
	before := secret.Registered()
	for range 3 {
		if _, err := ParseCloudInit("built-in", defaultTemplate); err != nil {
			t.Fatal(err)
		}
	}
	if after := secret.Registered(); after != before {
		t.Errorf("scrubber holds %d values after parsing, %d before", after, before)
	}
}
