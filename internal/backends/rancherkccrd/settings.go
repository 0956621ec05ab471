package rancherkccrd

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/secret"
)

// Defaults of the incumbent plugin (spec/rancher.md §3.1).
const (
	DefaultNamespace                = "waldur-system"
	DefaultParentGroupName          = "c_${cluster_id}"
	DefaultGroupNameTemplate        = "c_${cluster_id}_${rp_uuid}_${role_name}"
	DefaultClusterGroupNameTemplate = "c_${cluster_id}_cluster_${role_name}"
)

// Settings are the backend_settings of a rancher-kc-crd offering: the incumbent plugin's keys.
type Settings struct {
	KubeconfigPath           string            `mapstructure:"kubeconfig_path"`
	Context                  string            `mapstructure:"context"`
	Namespace                *string           `mapstructure:"namespace"`
	RoleMap                  map[string]string `mapstructure:"role_map"`
	ClusterRoleMap           map[string]string `mapstructure:"cluster_role_map"`
	ParentGroupName          *string           `mapstructure:"parent_group_name"`
	GroupNameTemplate        *string           `mapstructure:"group_name_template"`
	ClusterGroupNameTemplate *string           `mapstructure:"cluster_group_name_template"`
	KeycloakUseUserID        bool              `mapstructure:"keycloak_use_user_id"`

	// Accepted as the incumbent accepts them, and not used (a warning says why).
	WaldurAPIURL    string        `mapstructure:"waldur_api_url"`
	WaldurAPIToken  secret.Secret `mapstructure:"waldur_api_token"`
	WaldurVerifySSL *bool         `mapstructure:"waldur_verify_ssl"`
	ClusterID       string        `mapstructure:"cluster_id"`
}

// ignoredKeys are keys the incumbent accepts that this backend does not use, with the reason.
var ignoredKeys = map[string]string{
	"waldur_api_url": "the agent reads Waldur through the offering's own connection (the offering's waldur_api_url, " +
		"waldur_api_token or OIDC, verify_ssl), so this copy is not used",
	"waldur_api_token":  "the agent uses the offering's own Waldur credentials; this copy is not used",
	"waldur_verify_ssl": "the offering's verify_ssl applies to every Waldur call; this copy is not used",
	"cluster_id":        "each resource's backend_id is its Rancher cluster id; an offering-wide cluster_id is not used",
}

// config is Settings after defaults and validation.
type config struct {
	kubeconfig, context, namespace string
	roleMap, clusterRoleMap        map[string]string
	parentGroup, groupTemplate     string
	clusterGroupTemplate           string
	useUserID                      bool
}

var templateVar = regexp.MustCompile(`(?i)\$(?:\$|\{([_a-z][_a-z0-9]*)\}|([_a-z][_a-z0-9]*))`)

// knownVars are the variables the name templates understand.
var knownVars = map[string]bool{"cluster_id": true, "role_name": true, "rp_uuid": true, "rp_uuid_short": true,
	"customer_slug": true, "project_slug": true, "resource_slug": true, "project_name": true}

// parseSettings decodes and validates backend_settings; every error names its key. Keys this
// backend does not know are errors (with the closest known key when one is close), except
// keys the incumbent accepts that are not used here, which are warnings.
func parseSettings(in backends.Settings) (*config, []string, error) {
	var s Settings
	unknown, err := backends.DecodeSettings(in, &s)
	if err != nil {
		return nil, nil, err
	}
	if len(unknown) > 0 {
		return nil, nil, unknownKeyError(unknown[0])
	}
	var warnings []string
	for _, k := range slices.Sorted(maps.Keys(ignoredKeys)) {
		if _, set := in[k]; set {
			warnings = append(warnings, "backend_settings."+k+": ignored: "+ignoredKeys[k])
		}
	}
	c := &config{kubeconfig: expandHome(strings.TrimSpace(s.KubeconfigPath)), context: strings.TrimSpace(s.Context),
		namespace: strOr(s.Namespace, DefaultNamespace), roleMap: s.RoleMap, clusterRoleMap: s.ClusterRoleMap,
		parentGroup: strOr(s.ParentGroupName, DefaultParentGroupName), groupTemplate: strOr(s.GroupNameTemplate, DefaultGroupNameTemplate),
		clusterGroupTemplate: strOr(s.ClusterGroupNameTemplate, DefaultClusterGroupNameTemplate), useUserID: s.KeycloakUseUserID}
	if errs := validation.IsDNS1123Label(c.namespace); len(errs) > 0 {
		return nil, warnings, fmt.Errorf("backend_settings.namespace: %q is not a Kubernetes namespace name: %s", c.namespace, errs[0])
	}
	for key, m := range map[string]map[string]string{"role_map": c.roleMap, "cluster_role_map": c.clusterRoleMap} {
		if err := checkRoleMap(key, m); err != nil {
			return nil, warnings, err
		}
	}
	w, err := checkTemplates(c)
	return c, append(warnings, w...), err
}

func checkRoleMap(key string, m map[string]string) error {
	for _, role := range slices.Sorted(maps.Keys(m)) {
		if strings.TrimSpace(role) == "" || strings.TrimSpace(m[role]) == "" {
			return fmt.Errorf("backend_settings.%s: %q → %q: the Waldur role and the Rancher role template id must both be set", key, role, m[role])
		}
	}
	return nil
}

// checkTemplates warns about template variables that are not known (they stay as written, as in
// the incumbent's safe substitution) and about a project template without a per-project part.
func checkTemplates(c *config) ([]string, error) {
	var warnings []string
	templates := map[string]string{"parent_group_name": c.parentGroup, "group_name_template": c.groupTemplate,
		"cluster_group_name_template": c.clusterGroupTemplate}
	for _, key := range slices.Sorted(maps.Keys(templates)) {
		for _, m := range templateVar.FindAllStringSubmatch(templates[key], -1) {
			if name := m[1] + m[2]; name != "" && !knownVars[name] {
				warnings = append(warnings, fmt.Sprintf("backend_settings.%s: unknown variable $%s is kept as written "+
					"(known: ${cluster_id} ${role_name} ${rp_uuid} ${rp_uuid_short} ${customer_slug} ${project_slug} ${resource_slug} ${project_name})", key, name))
			}
		}
	}
	if !strings.Contains(c.groupTemplate, "rp_uuid") && !strings.Contains(c.groupTemplate, "project_name") {
		warnings = append(warnings, "backend_settings.group_name_template: has no per-project part (${rp_uuid}, "+
			"${rp_uuid_short} or ${project_name}): resource projects of one cluster share a Keycloak group, so a member "+
			"of one gets the same role in all of them")
	}
	if len(c.roleMap) == 0 {
		warnings = append(warnings, "backend_settings.role_map: empty: no resource-project role is bound, so no one gets access to the Rancher projects")
	}
	return warnings, nil
}

// unknownKeyError names an unknown key (w is "backend_settings.<key>…") and the closest known one.
func unknownKeyError(w string) error {
	key := strings.SplitN(strings.TrimPrefix(w, "backend_settings."), ".", 2)[0]
	msg := fmt.Sprintf("backend_settings.%s: not a rancher-kc-crd setting", key)
	if near := closest(key); near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", near)
	}
	return fmt.Errorf("%s; known: %s", msg, strings.Join(knownKeys(), ", "))
}

func knownKeys() []string {
	return []string{"kubeconfig_path", "context", "namespace", "role_map", "cluster_role_map", "parent_group_name",
		"group_name_template", "cluster_group_name_template", "keycloak_use_user_id",
		"waldur_api_url", "waldur_api_token", "waldur_verify_ssl"}
}

// closest is the known key within two edits of key ("" when none is).
func closest(key string) string {
	best, bestDist := "", 3
	for _, k := range append(knownKeys(), "cluster_id") {
		if d := editDistance(key, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func strOr(p *string, def string) string {
	if p == nil || strings.TrimSpace(*p) == "" {
		return def
	}
	return strings.TrimSpace(*p)
}

// expandHome expands a leading ~/ as the incumbent's kubernetes client does.
func expandHome(path string) string {
	if path == "~" || strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, strings.TrimPrefix(path, "~"))
		}
	}
	return path
}
