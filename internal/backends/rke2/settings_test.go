package rke2

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/backends"
)

// baseSettings is a valid managed-mode backend_settings section (as YAML would decode it).
func baseSettings() backends.Settings {
	return backends.Settings{
		"backend_url": "https://rancher.example.com", "username": "token-abcde", "password": "rancher-secret-key",
		"base_image_name": "ubuntu-24.04", "managed_rancher_server_flavor_name": "m1.large",
		"managed_rancher_server_system_volume_size_gb": 80, "managed_rancher_server_data_volume_size_gb": 100,
		"managed_rancher_worker_system_volume_size_gb": 64,
		"managed_rancher_tenant_max_cpu":               64, "managed_rancher_tenant_max_ram": 256, "managed_rancher_tenant_max_disk": 4000,
		"vault_host": "vault.example.com", "vault_token": "hvs.vault-root-token",
		"openstack": map[string]any{"auth_url": "https://keystone.example.com:5000/v3", "username": "admin",
			"password": "os-admin-password", "project_name": "k8s-clusters", "external_network_name": "public"},
	}
}

// withOS is baseSettings with keys of the openstack block changed (nil deletes).
func withOS(kv ...any) backends.Settings {
	s := baseSettings()
	o := map[string]any{}
	for k, v := range s["openstack"].(map[string]any) {
		o[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(o, kv[i].(string))
		} else {
			o[kv[i].(string)] = kv[i+1]
		}
	}
	s["openstack"] = o
	return s
}

func with(s backends.Settings, kv ...any) backends.Settings {
	out := backends.Settings{}
	for k, v := range s {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

func TestDecodeSettingsDefaults(t *testing.T) {
	s, warnings, err := DecodeSettings(with(baseSettings(), "typo_key", 1))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(warnings) != "[backend_settings.typo_key]" {
		t.Errorf("warnings = %v", warnings)
	}
	if s.DeploymentMode != ModeManaged || s.Bootstrap != BootstrapRancher || s.K8sVersion != DefaultK8sVersion ||
		s.VaultPort != 8200 || s.ServerNodesCount != 3 || !*s.VaultTLSVerify || s.NodeDiskDriver != "sd" {
		t.Errorf("defaults not applied: %+v", s)
	}
	if r := s.RoleRequirements["server"]; r.CPU != 2 || r.RAMMB != 4096 {
		t.Errorf("server requirement %+v", r)
	}
	if s.VaultAddr() != "https://vault.example.com:8200" {
		t.Errorf("VaultAddr = %s", s.VaultAddr())
	}
	if s.CloudInit() == nil {
		t.Error("no cloud-init template")
	}
	if o := s.OpenStack; o.SubnetCIDR != "10.200.0.0/22" || o.Interface != "public" || o.UserDomainName != "Default" ||
		*o.Retries != 4 || !*o.VerifySSL || o.ProjectName != "k8s-clusters" || o.Tenant != "shared" || o.TenantRole != "admin" || o.ForceDestroy {
		t.Errorf("openstack defaults not applied: %+v", o)
	}
	if strings.Contains(fmt.Sprintf("%+v %#v", s, s), "rancher-secret-key") || strings.Contains(fmt.Sprintf("%v", s), "hvs.vault-root-token") ||
		strings.Contains(fmt.Sprintf("%+v", s), "os-admin-password") {
		t.Error("settings print a secret")
	}
}

func TestDecodeSettingsErrorsNameTheKey(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.tmpl")
	if err := os.WriteFile(bad, []byte("#cloud-config\n{{ .NoSuchField }}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		in   backends.Settings
		key  string
	}{
		{"mode", with(baseSettings(), "deployment_mode", "hosted"), "deployment_mode"},
		{"bootstrap", with(baseSettings(), "bootstrap", "ansible"), "bootstrap"},
		{"url", with(baseSettings(), "backend_url", "rancher.example.com"), "backend_url"},
		{"username", with(baseSettings(), "username", nil), "username"},
		{"password", with(baseSettings(), "password", ""), "password"},
		{"image", with(baseSettings(), "base_image_name", nil), "base_image_name"},
		{"k8s", with(baseSettings(), "k8s_version", "1.31"), "k8s_version"},
		{"server flavor", with(baseSettings(), "managed_rancher_server_flavor_name", nil), "managed_rancher_server_flavor_name"},
		{"servers", with(baseSettings(), "server_nodes_count", 2), "server_nodes_count"},
		{"regex", with(baseSettings(), "flavors_regex", "m1.("), "flavors_regex"},
		{"negative", with(baseSettings(), "managed_rancher_tenant_max_cpu", -1), "managed_rancher_tenant_max_cpu"},
		{"max workers negative", with(baseSettings(), "max_worker_nodes", -1), "backend_settings.max_worker_nodes: must be between 1 and 10000"},
		{"max workers huge", with(baseSettings(), "max_worker_nodes", 1<<40), "backend_settings.max_worker_nodes"},
		{"small system volume", with(baseSettings(), "managed_rancher_worker_system_volume_size_gb", 10), "managed_rancher_worker_system_volume_size_gb"},
		{"wrong type", with(baseSettings(), "vault_port", "eighty"), "vault_port"},
		{"vault host", with(baseSettings(), "vault_host", nil), "vault_host"},
		{"vault token", with(baseSettings(), "vault_token", nil), "vault_token"},
		{"vault port", with(baseSettings(), "vault_port", 70000), "vault_port"},
		{"kv mount", with(baseSettings(), "vault_kv_mount", "/secret"), "vault_kv_mount"},
		{"registry half", with(baseSettings(), "private_registry_url", "https://r.example.com", "private_registry_user", "u"), "private_registry_user"},
		{"registry url", with(baseSettings(), "private_registry_user", "u", "private_registry_password", "p"), "private_registry_url"},
		{"keycloak", with(baseSettings(), "keycloak_url", "https://kc.example.com/auth/"), "keycloak_username"},
		{"role requirement", with(baseSettings(), "role_requirements", map[string]any{"etcd": map[string]any{"cpu": 1}}), "role_requirements.etcd"},
		{"disk driver", with(baseSettings(), "node_disk_driver", "/dev/sd"), "node_disk_driver"},
		{"components", with(baseSettings(), "worker_nodes_component", "server_nodes"), "worker_nodes_component"},
		{"template missing", with(baseSettings(), "cloud_init_template_file", filepath.Join(dir, "none")), "cloud_init_template_file"},
		{"template broken", with(baseSettings(), "cloud_init_template_file", bad), "cloud_init_template_file"},
		{"openstack missing", with(baseSettings(), "openstack", nil), "backend_settings.openstack.auth_url"},
		{"openstack auth_url", withOS("auth_url", "keystone:5000"), "backend_settings.openstack.auth_url"},
		{"openstack password", withOS("password", nil), "backend_settings.openstack.password"},
		{"openstack project", withOS("project_name", nil), "backend_settings.openstack.project_name"},
		{"openstack interface", withOS("interface", "private"), "backend_settings.openstack.interface"},
		{"openstack external", withOS("external_network_name", nil), "backend_settings.openstack.external_network_name"},
		{"openstack cidr", withOS("subnet_cidr", "10.0.0.0/30"), "backend_settings.openstack.subnet_cidr"},
		{"openstack dns", withOS("dns_nameservers", []any{"one"}), "backend_settings.openstack.dns_nameservers[0]"},
		{"openstack retries", withOS("retries", 99), "backend_settings.openstack.retries"},
		{"openstack tenant", withOS("tenant", "x"), `backend_settings.openstack.tenant: must be shared or per_cluster, got "x"`},
		{"openstack unknown type", withOS("verify_ssl", "maybe"), "openstack.verify_ssl"},
		{"drain timeout", with(baseSettings(), "drain_timeout", "10s"), "drain_timeout"},
		{"registration timeout", with(baseSettings(), "node_registration_timeout", "forever"), "node_registration_timeout"},
		{"argocd half", with(baseSettings(), "argocd_k8s_namespace", "argocd"), "argocd_k8s_namespace"},
		{"argocd namespace", with(baseSettings(), "argocd_k8s_namespace", "Argo_CD", "argocd_k8s_kubeconfig", "/etc/argocd.kubeconfig"), "argocd_k8s_namespace"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := DecodeSettings(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("err = %v, want one naming %s", err, tc.key)
			}
			if strings.Contains(err.Error(), "rancher-secret-key") || strings.Contains(err.Error(), "hvs.vault-root-token") ||
				strings.Contains(err.Error(), "os-admin-password") {
				t.Fatalf("error leaks a secret: %v", err)
			}
		})
	}
}

func TestDecodeSettingsSelfManagedNeedsNoServerFlavor(t *testing.T) {
	in := with(baseSettings(), "deployment_mode", "self_managed", "managed_rancher_server_flavor_name", nil, "bootstrap", "rke2")
	s, _, err := DecodeSettings(in)
	if err != nil || s.DeploymentMode != ModeSelfManaged || s.Bootstrap != BootstrapRKE2 {
		t.Fatalf("%+v %v", s, err)
	}
}

func TestRoleRequirementsMergePerField(t *testing.T) {
	s, _, err := DecodeSettings(with(baseSettings(), "role_requirements", map[string]any{"server": map[string]any{"cpu": 4}}))
	if err != nil {
		t.Fatal(err)
	}
	if r := s.RoleRequirements["server"]; r.CPU != 4 || r.RAMMB != 4096 {
		t.Errorf("server requirement %+v, want cpu 4 and the default 4096 MB", r)
	}
	if r := s.RoleRequirements["agent"]; r.CPU != 1 || r.RAMMB != 1024 {
		t.Errorf("agent requirement %+v", r)
	}
}
