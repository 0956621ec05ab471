package rancherkccrd

import (
	"fmt"
	"regexp"
	"strings"
)

// Kubernetes and Keycloak name limits.
const (
	maxObjectName    = 253 // RFC 1123 subdomain
	maxGroupName     = 255 // Keycloak's GROUP.NAME column (256+ fails with HTTP 500)
	suffixLen        = 8   // hex digits of the resource project UUID in a CR name
	labelResource    = "waldur.io/resource-uuid"
	labelProject     = "waldur.io/resource-project-uuid"
	crGroup          = "waldur.io"
	crVersion        = "v1alpha1"
	crKind           = "ManagedRancherProject"
	crResource       = "managedrancherprojects"
	defaultSlugStart = "resource"
)

var notNameChar = regexp.MustCompile(`[^a-z0-9.-]+`)

// crName is the custom resource's name: the resource slug, then "-" and the first 8 hex digits
// of the resource project UUID, as the incumbent names it. Waldur slugs may hold characters a
// Kubernetes name may not (Django's slugify keeps "_"); those become "-" (the incumbent sent
// them and the API server refused the object). The slug is cut, never the suffix, to stay
// within 253 characters.
func crName(resourceSlug, projectUUID string) string {
	safe := notNameChar.ReplaceAllString(strings.ToLower(resourceSlug), "-")
	safe = strings.Trim(safe, "-.")
	if safe == "" {
		safe = defaultSlugStart
	}
	suffix := hexUUID(projectUUID)
	if len(suffix) > suffixLen {
		suffix = suffix[:suffixLen]
	}
	if len(safe)+1+len(suffix) > maxObjectName {
		safe = strings.TrimRight(safe[:maxObjectName-1-len(suffix)], "-.")
	}
	return safe + "-" + suffix
}

// vars are the values of a name template's variables.
type vars map[string]string

// render substitutes ${name} and $name as Python's string.Template.safe_substitute does (the
// incumbent's renderer): known variables are replaced, unknown ones stay as written, "$$" is
// "$". A result longer than Keycloak accepts for a group name is an error.
func render(template string, v vars) (string, error) {
	out := templateVar.ReplaceAllStringFunc(template, func(m string) string {
		if m == "$$" {
			return "$"
		}
		name := strings.Trim(m[1:], "{}")
		if val, ok := v[name]; ok && knownVars[name] {
			return val
		}
		return m
	})
	if len(out) > maxGroupName {
		return "", fmt.Errorf("the Keycloak group name rendered from %q is %d characters, more than Keycloak's %d; "+
			"use ${rp_uuid_short} instead of ${rp_uuid} or shorter slugs: %.80s…", template, len(out), maxGroupName, out)
	}
	return out, nil
}

// hexUUID is a UUID as 32 lower-case hex digits.
func hexUUID(u string) string {
	return strings.ToLower(strings.ReplaceAll(u, "-", ""))
}
