package rancherkccrd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/backends"
)

func TestSettingsDefaultsAndIgnoredKeys(t *testing.T) {
	c, warnings, err := parseSettings(backends.Settings{
		"role_map": map[string]any{"project_member": "project-member"}, "kubeconfig_path": "~/.kube/config",
		"waldur_api_url": "https://waldur.example.com/api/", "waldur_api_token": "s3cret-token", "waldur_verify_ssl": true,
		"cluster_id": "c-m-1", "allocation_prefix": "x_",
	})
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	if c.namespace != DefaultNamespace || c.parentGroup != DefaultParentGroupName || c.groupTemplate != DefaultGroupNameTemplate ||
		c.clusterGroupTemplate != DefaultClusterGroupNameTemplate || c.useUserID || c.kubeconfig != filepath.Join(home, ".kube/config") {
		t.Fatalf("defaults %+v", c)
	}
	joined := strings.Join(warnings, "\n")
	for _, k := range []string{"waldur_api_url", "waldur_api_token", "waldur_verify_ssl", "cluster_id"} {
		if !strings.Contains(joined, "backend_settings."+k+": ignored") {
			t.Errorf("no warning for %s in %q", k, joined)
		}
	}
	if strings.Contains(joined, "s3cret") || strings.Contains(joined, "allocation_prefix") {
		t.Fatalf("warnings leak a secret or name a core key: %q", joined)
	}
}

func TestSettingsErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		name     string
		settings backends.Settings
		want     string
	}{
		{"typo with a suggestion", backends.Settings{"role_maps": map[string]any{}}, "backend_settings.role_maps: not a rancher-kc-crd setting (did you mean role_map?)"},
		{"unknown key", backends.Settings{"backend_url": "https://r"}, "backend_settings.backend_url: not a rancher-kc-crd setting; known:"},
		{"namespace", backends.Settings{"namespace": "Waldur_System"}, "backend_settings.namespace: \"Waldur_System\""},
		{"empty role template", backends.Settings{"role_map": map[string]any{"project_member": ""}}, "backend_settings.role_map: \"project_member\""},
		{"wrong type", backends.Settings{"keycloak_use_user_id": "sometimes"}, "keycloak_use_user_id"},
		{"cluster role map", backends.Settings{"cluster_role_map": map[string]any{"": "cluster-member"}}, "backend_settings.cluster_role_map"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := parseSettings(tc.settings)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestSettingsTemplateWarnings(t *testing.T) {
	_, warnings, err := parseSettings(backends.Settings{
		"role_map":            map[string]any{"r": "project-member"},
		"group_name_template": "c_${cluster_id}_${role}", "parent_group_name": "p_$clusterid",
	})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(warnings, "\n")
	for _, want := range []string{"group_name_template: unknown variable $role", "parent_group_name: unknown variable $clusterid",
		"group_name_template: has no per-project part"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no warning %q in:\n%s", want, joined)
		}
	}
	_, warnings, _ = parseSettings(backends.Settings{})
	if !strings.Contains(strings.Join(warnings, "\n"), "role_map: empty") {
		t.Errorf("no warning for an empty role_map: %v", warnings)
	}
}

func TestKubeconfigErrorsNameTheKey(t *testing.T) {
	c, _, err := parseSettings(backends.Settings{"kubeconfig_path": filepath.Join(t.TempDir(), "missing"), "context": "aio"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := restConfig(c); err == nil || !strings.Contains(err.Error(), "backend_settings.kubeconfig_path") {
		t.Fatalf("missing kubeconfig: %v", err)
	}
	path := filepath.Join(t.TempDir(), "config")
	kc := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:6443'}\n" +
		"users:\n- name: u\n  user: {token: abc}\ncontexts:\n- name: aio\n  context: {cluster: c, user: u}\n"
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	c.kubeconfig = path
	rc, err := restConfig(c)
	if err != nil || rc.Host != "https://127.0.0.1:6443" || rc.BearerToken != "abc" {
		t.Fatalf("config %+v err %v", rc, err)
	}
	c.context = "other"
	if _, err := restConfig(c); err == nil || !strings.Contains(err.Error(), `context "other"`) {
		t.Fatalf("unknown context: %v", err)
	}
}
