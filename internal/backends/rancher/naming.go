package rancher

import (
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// Annotation and label keys. The waldur/* annotations are the incumbent's, plus
// waldur/resource_uuid, which records ownership so a name clash with another resource is
// detected instead of silently shared.
const (
	annOrganization = "waldur/organization"
	annManaged      = "waldur/managed"
	annProjectSlug  = "waldur/project_slug"
	annResourceUUID = "waldur/resource_uuid"
	// annGroup records on a project the Keycloak child group its binding names (decided once:
	// the cluster-scoped name, or the incumbent's name when adopting it is unambiguous).
	annGroup = "waldur/keycloak_group"
	// annLabels lists on a namespace the namespace_labels keys the agent set, so that keys
	// dropped from the configuration are removed.
	annLabels = "waldur/managed-labels"
	// annStatus marks a quota holding temporary amounts (paused, downscaled).
	annStatus = "waldur/status"

	// projectIDKey assigns a namespace to a Rancher project: the annotation holds
	// "<cluster>:<project>", the label only "<project>" (how Rancher itself does it).
	projectIDKey = "field.cattle.io/projectId"

	psaEnforce        = "pod-security.kubernetes.io/enforce"
	psaEnforceVersion = "pod-security.kubernetes.io/enforce-version"

	// systemProjectLabel marks the System project Rancher makes in every cluster (v2.12.0
	// pkg/controllers/management/auth/project_cluster/cluster_handler.go).
	systemProjectLabel = "authz.management.cattle.io/system-project"

	quotaName       = "custom-resource-quota"
	principalScheme = "keycloakoidc_group://"
)

// projectName is the Rancher project (and namespace) name for a proposed backend name: the
// configured project_prefix followed by the name the core proposes (resource slug, or
// "resource-<uuid8>" when the slug is empty, lower-cased, with "-N" suffixes after clashes).
func projectName(prefix, proposed string) string {
	return prefix + proposed
}

// baseName is the name the core would propose first for res (used when it hands us a recorded
// backend id instead of a name).
func baseName(res backends.Resource) string {
	if res.Slug != "" {
		return strings.ToLower(res.Slug)
	}
	u := strings.ReplaceAll(res.UUID, "-", "")
	if len(u) > 8 {
		u = u[:8]
	}
	return "resource-" + u
}

// checkNamespaceName reports why name cannot be a namespace name (an RFC 1123 label).
func checkNamespaceName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return failure.Errorf("the Kubernetes namespace name %q is not valid: %s (it is project_prefix + the resource slug; "+
			"rename the resource using lower-case letters, digits and '-')", name, strings.Join(errs, "; "))
	}
	return nil
}

// parentGroupName is the Keycloak parent group: "c_" + the cluster id without ':' and '-',
// cut to 8 characters (c-m-1234abcd → c_cm1234ab), as the incumbent names it.
func parentGroupName(clusterID string) string {
	s := strings.NewReplacer(":", "", "-", "").Replace(clusterID)
	if len(s) > 8 {
		s = s[:8]
	}
	return "c_" + s
}

// childGroupName is the incumbent's Keycloak group of one Waldur project's members with one
// role. It does not name the cluster, so two clusters behind one Rancher and realm would share
// its principal; it is kept only for projects already bound to it (see scopedGroupName).
func childGroupName(projectSlug, role string) string {
	if projectSlug == "" {
		projectSlug = "unknown-project"
	}
	return fmt.Sprintf("project_%s_%s", projectSlug, role)
}

// scopedGroupName is the Keycloak group of one Waldur project's members with one role in one
// cluster: the cluster id in front of the incumbent's name (c-m-1234abcd_project_physics_
// workloads-manage). It is shared by all resources of that Waldur project in the cluster.
func scopedGroupName(clusterID, projectSlug, role string) string {
	return clusterID + "_" + childGroupName(projectSlug, role)
}

func parentGroupDescription(clusterID string) string {
	return "Cluster access group for " + clusterID
}

func childGroupDescription(projectSlug, role string) string {
	return fmt.Sprintf("Project %s members with role %s", projectSlug, role)
}

// principal is the Rancher group principal of a Keycloak group (by name: Rancher's keycloakoidc
// provider must emit short group names, i.e. the "full group path" mapper off).
func principal(group string) string { return principalScheme + group }

// description is the Rancher project description.
func description(res backends.Resource) string {
	customer := res.CustomerName
	if customer == "" {
		customer = res.CustomerSlug
	}
	project := res.ProjectName
	if project == "" {
		project = res.ProjectSlug
	}
	return fmt.Sprintf("%s (Customer: %s, Project: %s)", res.Name, customer, project)
}

// predictSlug approximates the slug Waldur derives from a resource name (Django's slugify:
// ASCII-folded, lower-case, only letters, digits, '_', '-' and spaces kept, runs of spaces and
// dashes collapsed to one '-', leading/trailing '-' and '_' stripped). Orders awaiting approval
// carry the name but not the slug; the prediction lets bad names be rejected before anything
// is approved. Create checks the real slug again.
func predictSlug(name string) string {
	var b strings.Builder
	for _, r := range norm.NFKD.String(name) {
		switch {
		case r > unicode.MaxASCII:
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-':
			b.WriteRune(unicode.ToLower(r))
		case unicode.IsSpace(r):
			b.WriteRune(' ')
		}
	}
	s := strings.Join(strings.FieldsFunc(b.String(), func(r rune) bool { return r == ' ' || r == '-' }), "-")
	return strings.Trim(s, "-_")
}
