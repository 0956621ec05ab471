package keycloaksim

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultVersion is the Keycloak version simulated when Options.Version is empty.
const DefaultVersion = "26.0.7"

// features are the admin API differences between the Keycloak versions sites still run, with
// the release that changed each (Keycloak upgrade notes and the pull requests named):
//
//   - exactGroups: GET groups honours exact=true from 20.0 (keycloak/keycloak#13974); older
//     servers ignore it and answer the case-insensitive substring search.
//   - children: GET groups/{id}/children exists from 23.0 ("New endpoint for Group Admin API");
//     before it only POST serves that path, so a GET is a 405. Search on it was ignored by
//     24.0.0–24.0.3 (#28818, fixed by #29011), which Options.ChildrenSearchIgnored models.
//   - inlineSubGroups: before 23.0 a group representation (GET groups/{id}, the top-level list)
//     carries its whole subtree in subGroups and no subGroupCount; from 23.0 subGroups is only
//     filled along search paths.
type features struct {
	major           int
	exactGroups     bool
	children        bool
	inlineSubGroups bool
}

// featuresOf parses "MAJOR.MINOR.PATCH" (a bare major is fine); anything unparsable is the
// default version.
func featuresOf(version string) features {
	if version == "" {
		version = DefaultVersion
	}
	major, err := strconv.Atoi(strings.SplitN(version, ".", 2)[0])
	if err != nil {
		major, _ = strconv.Atoi(strings.SplitN(DefaultVersion, ".", 2)[0])
	}
	return features{major: major, exactGroups: major >= 20, children: major >= 23, inlineSubGroups: major < 23}
}

// version returns the simulated version string.
func (s *Server) version() string {
	if s.opts.Version == "" {
		return DefaultVersion
	}
	return s.opts.Version
}

// serverInfo is GET admin/serverinfo: any administrator may read it; the simulator answers the
// systemInfo part only (the real answer also lists themes, providers and protocol mappers).
func serverInfo(c *call) result {
	if !c.anyAdminRole() {
		return forbidden()
	}
	now := c.s.now()
	return okResult(map[string]any{"systemInfo": map[string]any{
		"version": c.s.version(), "serverTime": now.UTC().Format(time.RFC1123), "uptime": "0 days, 0 hours",
		"uptimeMillis": 0, "javaVersion": "21.0.5",
	}})
}

// childrenUnsupported answers GET groups/{id}/children on servers before 23.0: the path only
// serves POST there, so JAX-RS answers 405.
func childrenUnsupported() result {
	r := errorResult(http.StatusMethodNotAllowed, "HTTP 405 Method Not Allowed")
	r.header = http.Header{"Allow": {"POST, OPTIONS"}}
	return r
}

// subtree fills rep.SubGroups with g's whole subtree, as servers before 23.0 did.
func (c *call) subtree(rep *groupRep, g *group, o repOpts) {
	for _, k := range c.realm.childrenOf(g) {
		kid := c.groupRep(k, o)
		c.subtree(kid, k, o)
		rep.SubGroups = append(rep.SubGroups, kid)
	}
}

// adminClient is the client whose roles grant administration of realm to the admin user: the
// realm's own realm-management client when the admin lives in it, else "<realm>-realm" in the
// admin's realm (Keycloak's master-realm administrator layout).
func (s *Server) adminClient(realm string) string {
	if realm == s.admin.Realm {
		return "realm-management"
	}
	return realm + "-realm"
}

// tokenRoles is the resource_access claim of an access token: the admin's realm-management
// roles, composites expanded as Keycloak puts them in tokens (realm-admin includes every
// realm-management role), for the admin client of every realm. Callers hold s.mu.
func (s *Server) tokenRoles() map[string]any {
	roles := append([]string{}, s.admin.Roles...)
	for _, r := range s.admin.Roles {
		if r == RoleRealmAdmin {
			roles = append(roles, RoleManageUsers, RoleViewUsers, RoleQueryGroups, RoleQueryUsers, RoleViewRealm)
		}
	}
	access := map[string]any{"account": map[string]any{"roles": []string{"manage-account", "view-profile"}}}
	for name := range s.realms {
		if name == s.admin.Realm && name != s.opts.Realm {
			continue // the admin's own realm is not managed here
		}
		access[s.adminClient(name)] = map[string]any{"roles": roles}
	}
	return access
}
