package rancherkccrd

import (
	"fmt"
	"maps"
	"slices"

	"github.com/waldur/site-agent/internal/backends"
)

// spec is a ManagedRancherProject's spec as the agent writes it (spec/rancher.md §3.3).
// spec.namespace is not written: the operator no longer manages namespaces (since 0.3.0).
type spec struct {
	ClusterID           string         `json:"clusterId"`
	ProjectName         string         `json:"projectName"`
	ResourceUUID        string         `json:"resourceUuid"`
	ResourceProjectUUID string         `json:"resourceProjectUuid"`
	Description         string         `json:"description,omitempty"`
	ResourceQuotas      map[string]any `json:"resourceQuotas,omitempty"`
	Keycloak            keycloakSpec   `json:"keycloak"`
	Cluster             *clusterSpec   `json:"cluster,omitempty"`
}

type keycloakSpec struct {
	Enabled         bool          `json:"enabled"`
	ParentGroupName string        `json:"parentGroupName,omitempty"`
	RoleBindings    []roleBinding `json:"roleBindings"`
}

// clusterSpec carries the cluster-scope bindings (operator 0.4.0 and later). An empty list of
// bindings is written on purpose: it tells the operator to remove the cluster bindings.
type clusterSpec struct {
	Keycloak keycloakSpec `json:"keycloak"`
}

type roleBinding struct {
	GroupName   string   `json:"groupName"`
	RancherRole string   `json:"rancherRole"`
	Members     []member `json:"members"`
}

type member struct {
	UserIdentifier string `json:"userIdentifier"`
	LookupByID     bool   `json:"lookupByID"`
}

// quotaKeys are the resource-project limits passed to the operator, in Waldur's units.
var quotaKeys = []string{"cpu", "memory", "storage", "gpu"}

// desired is the custom resource one resource project should have.
type desired struct {
	name, projectUUID string
	labels            map[string]string
	spec              spec
	err               error // the spec could not be built (a group name too long)
}

// buildDesired renders the custom resource of one resource project. cluster is nil when the
// cluster-scope bindings are not written (no cluster_role_map).
func (c *config) buildDesired(res backends.Resource, rp backends.ResourceProject, cluster []roleBinding) desired {
	rpHex := hexUUID(rp.UUID)
	d := desired{name: crName(res.Slug, rpHex), projectUUID: rpHex,
		labels: map[string]string{labelResource: hexUUID(res.UUID), labelProject: rpHex}}
	base := c.baseVars(res)
	parent, err := render(c.parentGroup, base)
	if err != nil {
		d.err = fmt.Errorf("parent_group_name: %w", err)
		return d
	}
	v := base.with("rp_uuid", rpHex).with("rp_uuid_short", rpHex[:min(suffixLen, len(rpHex))]).with("project_name", rp.Name)
	bindings, err := c.bindings(rp.Grants, c.roleMap, c.groupTemplate, v)
	if err != nil {
		d.err = fmt.Errorf("group_name_template: %w", err)
		return d
	}
	d.spec = spec{ClusterID: res.BackendID, ProjectName: rp.Name, ResourceUUID: hexUUID(res.UUID), ResourceProjectUUID: rpHex,
		Description: rp.Description, ResourceQuotas: quotas(rp.Limits),
		Keycloak: keycloakSpec{Enabled: true, ParentGroupName: parent, RoleBindings: bindings}}
	if cluster != nil {
		d.spec.Cluster = &clusterSpec{Keycloak: keycloakSpec{Enabled: true, RoleBindings: cluster}}
	}
	return d
}

// clusterBindings renders the cluster-scope bindings shared by every custom resource of the
// resource; nil when there is no cluster_role_map (the block is then not written at all).
func (c *config) clusterBindings(res backends.Resource, grants []backends.Grant) ([]roleBinding, error) {
	if len(c.clusterRoleMap) == 0 {
		return nil, nil
	}
	v := c.baseVars(res).with("rp_uuid", "").with("rp_uuid_short", "").with("project_name", "")
	b, err := c.bindings(grants, c.clusterRoleMap, c.clusterGroupTemplate, v)
	if err != nil {
		return nil, fmt.Errorf("cluster_group_name_template: %w", err)
	}
	return b, nil
}

func (c *config) baseVars(res backends.Resource) vars {
	return vars{"cluster_id": res.BackendID, "role_name": "", "customer_slug": res.CustomerSlug,
		"project_slug": res.ProjectSlug, "resource_slug": res.Slug}
}

func (v vars) with(k, val string) vars {
	out := make(vars, len(v)+1)
	for key, x := range v {
		out[key] = x
	}
	out[k] = val
	return out
}

// bindings groups the grants by role: one binding per role the map knows, sorted by role name;
// a role without a member that has an identifier is left out. Never nil.
func (c *config) bindings(grants []backends.Grant, roleMap map[string]string, template string, v vars) ([]roleBinding, error) {
	byRole := map[string][]member{}
	for _, g := range grants {
		if _, mapped := roleMap[g.Role]; !mapped || g.Role == "" {
			continue
		}
		if id := c.identifier(g); id != "" {
			byRole[g.Role] = append(byRole[g.Role], member{UserIdentifier: id, LookupByID: c.useUserID})
		}
	}
	out := []roleBinding{}
	for _, role := range slices.Sorted(maps.Keys(byRole)) {
		name, err := render(template, v.with("role_name", role))
		if err != nil {
			return nil, err
		}
		out = append(out, roleBinding{GroupName: name, RancherRole: roleMap[role], Members: byRole[role]})
	}
	return out, nil
}

// identifier is how the operator finds the user in Keycloak: the Waldur username, or with
// keycloak_use_user_id the Waldur user UUID as 32 hex digits.
func (c *config) identifier(g backends.Grant) string {
	if c.useUserID {
		return hexUUID(g.UserUUID)
	}
	return g.Username
}

// quotas passes the resource project's limits through: only cpu, memory, storage and gpu, and
// neither 0, "" nor null (the operator discards anything else). nil when nothing is left.
func quotas(limits map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range quotaKeys {
		switch v := limits[k].(type) {
		case nil:
		case string:
			if v != "" {
				out[k] = v
			}
		case float64:
			if v != 0 {
				out[k] = v
			}
		case int:
			if v != 0 {
				out[k] = v
			}
		case bool:
			if v {
				out[k] = v
			}
		default:
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// unmappedRoles lists the roles of grants that the map does not know (sorted, unique).
func unmappedRoles(grants []backends.Grant, roleMap map[string]string) []string {
	seen := map[string]bool{}
	for _, g := range grants {
		if _, ok := roleMap[g.Role]; !ok && g.Role != "" {
			seen[g.Role] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
