package keycloaksim

import (
	"net/http"
	"sort"
	"strings"
)

// Route names, as counted by Calls and used by FailNext and Faults.Operations.
const (
	RouteToken            = "POST token"
	RouteRealm            = "GET realm"
	RouteUsers            = "GET users"
	RouteUser             = "GET users/{id}"
	RouteUserGroups       = "GET users/{id}/groups"
	RouteJoinGroup        = "PUT users/{id}/groups/{gid}"
	RouteLeaveGroup       = "DELETE users/{id}/groups/{gid}"
	RouteGroups           = "GET groups"
	RouteCreateGroup      = "POST groups"
	RouteGroup            = "GET groups/{id}"
	RouteUpdateGroup      = "PUT groups/{id}"
	RouteDeleteGroup      = "DELETE groups/{id}"
	RouteChildren         = "GET groups/{id}/children"
	RouteCreateChild      = "POST groups/{id}/children"
	RouteMembers          = "GET groups/{id}/members"
	RouteServerInfo       = "GET serverinfo"
	resourceUnimplemented = "unimplemented"
)

// resource is one path template: the methods the simulator serves and the ones Keycloak also
// serves there (answered 501).
type resource struct {
	template string
	serves   []string
	kcOnly   []string
}

var resources = map[string]resource{
	"token":       {"token", []string{http.MethodPost}, nil},
	"realm":       {"realm", []string{http.MethodGet}, []string{http.MethodPut, http.MethodDelete}},
	"users":       {"users", []string{http.MethodGet}, []string{http.MethodPost}},
	"user":        {"users/{id}", []string{http.MethodGet}, []string{http.MethodPut, http.MethodDelete}},
	"user-groups": {"users/{id}/groups", []string{http.MethodGet}, nil},
	"user-group":  {"users/{id}/groups/{gid}", []string{http.MethodPut, http.MethodDelete}, nil},
	"groups":      {"groups", []string{http.MethodGet, http.MethodPost}, nil},
	"group":       {"groups/{id}", []string{http.MethodGet, http.MethodPut, http.MethodDelete}, nil},
	"children":    {"groups/{id}/children", []string{http.MethodGet, http.MethodPost}, nil},
	"members":     {"groups/{id}/members", []string{http.MethodGet}, nil},
	"serverinfo":  {"serverinfo", []string{http.MethodGet}, nil},
}

// Keycloak sub-resources the simulator knows exist but does not model: a request there is a 501,
// not a 404 that would look like a wrong path.
var (
	kcRealmChildren = set("attack-detection", "authentication", "client-description-converter",
		"client-policies", "client-registration-policy", "client-scopes", "client-types", "clients",
		"clients-initial-access", "components", "default-default-client-scopes", "default-groups",
		"default-optional-client-scopes", "events", "admin-events", "group-by-path",
		"identity-provider", "keys", "localization", "logout-all", "organizations",
		"partial-export", "partialImport", "push-revocation", "roles", "roles-by-id", "sessions",
		"users-management-permissions", "workflows")
	kcUserChildren = set("configured-user-storage-credential-types", "consents", "credentials",
		"disable-credential-types", "execute-actions-email", "federated-identity", "impersonation",
		"logout", "offline-sessions", "reset-password", "reset-password-email", "role-mappings",
		"send-verify-email", "sessions", "unmanagedAttributes")
	kcGroupChildren = set("management", "role-mappings")
)

func set(items ...string) map[string]bool {
	m := make(map[string]bool, len(items))
	for _, it := range items {
		m[it] = true
	}
	return m
}

// route is a matched request: its counted name, realm and path parameters.
type route struct {
	name  string
	res   resource
	realm string
	id    string
	gid   string
}

func (r route) allowed() []string {
	out := append(append([]string(nil), r.res.serves...), r.res.kcOnly...)
	sort.Strings(out)
	return out
}

// match finds the route for r, or answers 404 (no such path), 405 (a method Keycloak does not
// serve there) or 501 (Keycloak serves it, the simulator does not).
func (s *Server) match(r *http.Request) (route, int) {
	path, ok := strings.CutPrefix(r.URL.Path, s.opts.PathPrefix+"/")
	if !ok {
		return route{}, http.StatusNotFound
	}
	segs := strings.Split(strings.TrimSuffix(path, "/"), "/")
	key, rt := classify(segs)
	switch key {
	case "":
		return route{}, http.StatusNotFound
	case resourceUnimplemented:
		return route{}, http.StatusNotImplemented
	}
	rt.res = resources[key]
	for _, m := range rt.res.serves {
		if m == r.Method {
			rt.name = r.Method + " " + rt.res.template
			return rt, 0
		}
	}
	for _, m := range rt.res.kcOnly {
		if m == r.Method {
			return rt, http.StatusNotImplemented
		}
	}
	return rt, http.StatusMethodNotAllowed
}

// classify maps path segments to a resource key and its parameters.
func classify(segs []string) (string, route) {
	for _, s := range segs {
		if s == "" {
			return "", route{}
		}
	}
	if len(segs) == 5 && segs[0] == "realms" && segs[2] == "protocol" && segs[3] == "openid-connect" && segs[4] == "token" {
		return "token", route{realm: segs[1]}
	}
	if len(segs) == 2 && segs[0] == "admin" && segs[1] == "serverinfo" {
		return "serverinfo", route{}
	}
	if len(segs) < 3 || segs[0] != "admin" || segs[1] != "realms" {
		return "", route{}
	}
	rt := route{realm: segs[2]}
	rest := segs[3:]
	if len(rest) == 0 {
		return "realm", rt
	}
	switch rest[0] {
	case "users":
		return classifyUsers(rest[1:], rt)
	case "groups":
		return classifyGroups(rest[1:], rt)
	}
	if kcRealmChildren[rest[0]] {
		return resourceUnimplemented, rt
	}
	return "", rt
}

func classifyUsers(rest []string, rt route) (string, route) {
	switch {
	case len(rest) == 0:
		return "users", rt
	case rest[0] == "count" || rest[0] == "profile":
		return resourceUnimplemented, rt
	}
	rt.id = rest[0]
	switch {
	case len(rest) == 1:
		return "user", rt
	case rest[1] == "groups" && len(rest) == 2:
		return "user-groups", rt
	case rest[1] == "groups" && len(rest) == 3 && rest[2] == "count":
		return resourceUnimplemented, rt
	case rest[1] == "groups" && len(rest) == 3:
		rt.gid = rest[2]
		return "user-group", rt
	case kcUserChildren[rest[1]]:
		return resourceUnimplemented, rt
	}
	return "", rt
}

func classifyGroups(rest []string, rt route) (string, route) {
	switch {
	case len(rest) == 0:
		return "groups", rt
	case rest[0] == "count":
		return resourceUnimplemented, rt
	}
	rt.id = rest[0]
	switch {
	case len(rest) == 1:
		return "group", rt
	case len(rest) == 2 && rest[1] == "children":
		return "children", rt
	case len(rest) == 2 && rest[1] == "members":
		return "members", rt
	case kcGroupChildren[rest[1]]:
		return resourceUnimplemented, rt
	}
	return "", rt
}
