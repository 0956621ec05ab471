package rancher

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/waldur/site-agent/internal/backends"
)

// incumbentSettings is backend_settings as the incumbent's README writes them.
func incumbentSettings() map[string]any {
	return map[string]any{
		"backend_url": "https://rancher.example.com", "username": "token-abcde", "password": "very-secret-key",
		"cluster_id": "c-m-1234abcd", "verify_cert": true, "project_prefix": "waldur-", "default_role": "workloads-manage",
		"keycloak_enabled": true, "keycloak_use_user_id": true,
		"keycloak": map[string]any{"keycloak_url": "https://kc.example.com/auth/", "keycloak_realm": "your-realm",
			"keycloak_user_realm": "your-realm", "keycloak_username": "waldur-site-agent-rancher",
			"keycloak_password": "kc-secret", "keycloak_ssl_verify": true},
	}
}

func with(base map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func TestSettingsDefaults(t *testing.T) {
	minimal := map[string]any{"username": "token-x", "password": "s", "cluster_id": "c-j8276"}
	cfg, warnings, err := parseSettings(minimal, testComps)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("parse: %v %v", err, warnings)
	}
	got := map[string]any{"url": cfg.baseURL, "prefix": cfg.prefix, "role": cfg.role, "verify": cfg.verifyTLS,
		"kc": cfg.keycloak, "byID": cfg.useUserID, "usage": cfg.usageSource, "parent": cfg.parentGroup, "timeout": cfg.timeout.String()}
	want := map[string]any{"url": "https://localhost", "prefix": "waldur-", "role": "workloads-manage", "verify": true,
		"kc": false, "byID": true, "usage": "quota", "parent": "c_cj8276", "timeout": "30s"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("defaults (-want +got):\n%s", d)
	}
	cfg, _, err = parseSettings(incumbentSettings(), testComps)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.kc.ClientID != "admin-cli" || cfg.kc.Realm != "your-realm" || cfg.parentGroup != "c_cm1234ab" {
		t.Fatalf("keycloak defaults: %+v parent %s", cfg.kc, cfg.parentGroup)
	}
	if s := fmt.Sprintf("%v %+v", cfg, cfg.kc); strings.Contains(s, "very-secret-key") || strings.Contains(s, "kc-secret") {
		t.Fatalf("settings print a secret: %s", s)
	}
}

// The incumbent's file spells booleans the YAML 1.1 way (PyYAML read them so): verify_cert: no,
// keycloak_enabled: yes and their kind read as booleans.
func TestSettingsYAML11Booleans(t *testing.T) {
	in := with(incumbentSettings(), "verify_cert", "no", "keycloak_enabled", "Yes", "keycloak_use_user_id", "off",
		"remove_stale_bindings", "N")
	cfg, warnings, err := parseSettings(in, testComps)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("parse: %v %v", err, warnings)
	}
	if cfg.verifyTLS || !cfg.keycloak || cfg.useUserID || cfg.pruneBindings {
		t.Fatalf("verify %v, keycloak %v, by id %v, prune bindings %v", cfg.verifyTLS, cfg.keycloak, cfg.useUserID, cfg.pruneBindings)
	}
}

func TestSettingsErrorsNameTheKey(t *testing.T) {
	base := incumbentSettings()
	cases := []struct {
		name     string
		settings map[string]any
		comps    backends.Components
		want     string
	}{
		{"no access key", with(base, "username", nil), nil, "backend_settings.username"},
		{"access:secret in username", with(base, "username", "token-a:b"), nil, "backend_settings.username"},
		{"no secret key", with(base, "password", nil), nil, "backend_settings.password"},
		{"no cluster", with(base, "cluster_id", nil), nil, "backend_settings.cluster_id: is required"},
		{"project reference", with(base, "cluster_id", "c-m-1234abcd:p-xyz12"), nil, `use only the cluster part "c-m-1234abcd"`},
		{"not a cluster id", with(base, "cluster_id", "production"), nil, "is not a Rancher cluster id"},
		{"url scheme", with(base, "backend_url", "rancher.example.com"), nil, "backend_settings.backend_url"},
		{"url credentials", with(base, "backend_url", "https://u:p@rancher.example.com"), nil, "must not contain credentials"},
		{"prefix", with(base, "project_prefix", "Waldur_"), nil, "backend_settings.project_prefix"},
		{"role", with(base, "default_role", "Workloads Manage"), nil, "backend_settings.default_role"},
		{"label key", with(base, "namespace_labels", map[string]any{"gpu pool": "x"}), nil, "backend_settings.namespace_labels"},
		{"label value", with(base, "namespace_labels", map[string]any{"gpu-pool": "h100 2x"}), nil, "namespace_labels.gpu-pool"},
		{"label type", with(base, "namespace_labels", map[string]any{"gpu-pool": 2}), nil, "namespace_labels"},
		{"reserved label", with(base, "namespace_labels", map[string]any{projectIDKey: "p-x"}), nil, "set by the agent"},
		{"usage source", with(base, "usage_source", "metrics"), nil, "backend_settings.usage_source"},
		{"verify type", with(base, "verify_cert", "sometimes"), nil, "verify_cert"},
		{"timeout", with(base, "timeout", "1ms"), nil, "backend_settings.timeout"},
		{"kc user", with(base, "keycloak", map[string]any{"keycloak_password": "x"}), nil, "keycloak.keycloak_username"},
		{"kc password", with(base, "keycloak", map[string]any{"keycloak_username": "x"}), nil, "keycloak.keycloak_password"},
		{"kc url", with(base, "keycloak", map[string]any{"keycloak_url": "kc.example", "keycloak_username": "x", "keycloak_password": "y"}), nil,
			"keycloak.keycloak_url"},
		{"duplicate quota key", base, backends.Components{{Name: "a", Settings: map[string]any{"type": "cpu"}},
			{Name: "b", Settings: map[string]any{"type": "cpu"}}}, "backend_components.b: maps to the quota key limits.cpu"},
		{"bad k8s_resource", base, backends.Components{{Name: "g", Settings: map[string]any{"type": "gpu", "k8s_resource": "requests.nvidia.com/gpu"}}},
			"backend_components.g.k8s_resource"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := New(backends.Params{Settings: tc.settings, Components: tc.comps})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
			for _, secret := range []string{"very-secret-key", "kc-secret"} {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("error leaks a secret: %v", err)
				}
			}
		})
	}
}

func TestSettingsWarnings(t *testing.T) {
	s := with(incumbentSettings(), "backend_url", "https://rancher.example.com/v3/", "rancher_role", "x",
		"keycloak", map[string]any{"keycloak_username": "u", "keycloak_password": "p", "keycloak_sync_frequency": 15},
		"allocation_prefix", "", "check_backend_id_uniqueness", false)
	b, warnings, err := New(backends.Params{Settings: s, Components: testComps})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"backend_settings.keycloak.keycloak_sync_frequency", "backend_settings.rancher_role",
		"backend_settings.backend_url: ends in /v3, which the agent adds itself; it was removed"}
	if d := cmp.Diff(want, warnings); d != "" {
		t.Fatalf("warnings (-want +got):\n%s", d)
	}
	if core(b).cfg.baseURL != "https://rancher.example.com" {
		t.Fatalf("base url %q", core(b).cfg.baseURL)
	}
}

// The constructor picks the variant by keycloak_enabled: without Keycloak there is no
// membership role (access is only granted through groups). Both pause, downscale and restore
// through the quota (the incumbent's were no-ops).
func TestRolesByKeycloakSetting(t *testing.T) {
	on, _, err := New(backends.Params{Settings: incumbentSettings(), Components: testComps})
	if err != nil {
		t.Fatal(err)
	}
	off, _, err := New(backends.Params{Settings: with(incumbentSettings(), "keycloak_enabled", false), Components: testComps})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		b       backends.Backend
		members bool
	}{{on, true}, {off, false}} {
		set := backends.RolesOf("rancher", tc.b)
		if (set.Members != nil) != tc.members || set.Provisioner == nil || set.Usage == nil || set.Reconciler == nil ||
			set.Limits == nil || set.Metadata == nil || set.Pinger == nil || set.Diagnoser == nil || set.Evaluator == nil || set.Closer == nil ||
			set.Status == nil {
			t.Fatalf("roles of %T: %+v", tc.b, set)
		}
	}
}
