package rke2

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/testenv"
)

// TestCloudInitSchemaReal (tier 2): every rendered user data — both bootstrap modes, with and
// without data volumes (servers), with and without a private registry, the built-in and a custom
// template, for the initial server, a joining server and an agent — passes
// `cloud-init schema --config-file` of Debian's cloud-init (22.4.2; scripts/cloudinit/install.sh
// installs it).
func TestCloudInitSchemaReal(t *testing.T) {
	if err := testenv.Gate(); err != nil {
		t.Skip(err)
	}
	bin, err := exec.LookPath("cloud-init")
	if err != nil {
		if os.Getenv(testenv.EnvRequireReal) == "1" {
			t.Fatal("cloud-init is not installed (scripts/cloudinit/install.sh)")
		}
		t.Skip("cloud-init is not installed (scripts/cloudinit/install.sh)")
	}
	dir := t.TempDir()
	custom := filepath.Join(dir, "site.tmpl")
	builtin, err := os.ReadFile(filepath.Join("templates", "node.yaml.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	site := string(builtin) + "ntp:\n  enabled: true\n  servers: [ntp.example.org]\nfinal_message: \"{{ .NodeName }} is up\"\n"
	if err := os.WriteFile(custom, []byte(site), 0o600); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, mode := range []string{BootstrapRancher, BootstrapRKE2} {
		for _, v := range schemaVariants(custom) {
			kv := append([]any{"bootstrap", mode}, v.settings...)
			s := goldenSettings(t, kv...)
			spec := schemaSpec(t, s, v.agentVolumes)
			for _, inv := range []Inventory{{Role: RoleServer, Initial: true}, {Role: RoleServer, Index: 1, Join: "prod-server-0"}, {Role: RoleAgent, Join: "prod-server-0"}} {
				inv.Cluster, inv.Stage = testCluster, StageInstall
				name := NodeName(spec.Name, inv.Role, inv.Index)
				ud, err := s.CloudInit().Render(NewNodeConfig(s, spec, name, inv, VaultCredentials{RoleID: "r", SecretID: secret.New(goldenSecretID)}, "10.0.0.11"))
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("%s/%s/%s", mode, v.name, name)
				f := filepath.Join(dir, strings.ReplaceAll(what, "/", "_")+".yaml")
				if err := os.WriteFile(f, ud.Bytes(), 0o600); err != nil {
					t.Fatal(err)
				}
				out, err := exec.Command(bin, "schema", "--config-file", f).CombinedOutput()
				var exit *exec.ExitError
				if err != nil && !errors.As(err, &exit) {
					t.Fatal(err)
				}
				if err != nil || !strings.Contains(string(out), "Valid cloud-config") {
					t.Errorf("%s: cloud-init schema: %v\n%s", what, err, out)
				}
				checked++
			}
		}
	}
	t.Logf("%d rendered user data valid for %s", checked, bin)
}

type schemaVariant struct {
	name         string
	settings     []any
	agentVolumes bool
}

func schemaVariants(custom string) []schemaVariant {
	registry := []any{"private_registry_url", "https://registry.example.com:5000", "private_registry_user", "puller", "private_registry_password", "pw"}
	return []schemaVariant{
		{"no-volumes", nil, false},
		{"volumes", []any{"managed_rancher_server_data_volume_size_gb", 100}, true},
		{"registry", registry, false},
		{"volumes-registry", append([]any{"managed_rancher_server_data_volume_size_gb", 100}, registry...), true},
		{"custom-template", []any{"cloud_init_template_file", custom}, true},
	}
}

func schemaSpec(t *testing.T, s *Settings, volumes bool) *ClusterSpec {
	t.Helper()
	// Managed mode always gives agents a data volume; servers have none without
	// managed_rancher_server_data_volume_size_gb (their user data then has no disk sections).
	attrs := map[string]any{"name": "prod", "worker_nodes_count": 2.0, "worker_nodes_flavor_name": "m1.xlarge",
		"worker_nodes_data_volume_size": 102400.0}
	if volumes {
		attrs["install_longhorn"], attrs["worker_nodes_longhorn_volume_size"] = true, 204800.0
	}
	spec, err := ParseSpec(s, backends.Resource{Name: "prod", Attributes: attrs})
	if err != nil {
		t.Fatal(err)
	}
	return &spec
}
