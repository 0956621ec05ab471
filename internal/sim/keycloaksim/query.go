package keycloaksim

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// paramKind says how Keycloak converts a query parameter.
type paramKind int

const (
	pString     paramKind = iota
	pInt                  // Integer: a value that does not parse is a 404 (JAX-RS param conversion)
	pBool                 // Boolean.valueOf: only "true" (any case) is true, never an error
	pUnmodelled           // declared by Keycloak, not modelled here: 501 when sent
)

// declared lists the query parameters Keycloak declares per route (Keycloak 26 resources).
var declared = map[string]map[string]paramKind{
	RouteRealm: {},
	RouteUsers: {
		"username": pString, "exact": pBool, "first": pInt, "max": pInt, "briefRepresentation": pBool,
		"search": pString, "email": pUnmodelled, "emailVerified": pUnmodelled, "enabled": pUnmodelled,
		"firstName": pUnmodelled, "lastName": pUnmodelled, "idpAlias": pUnmodelled,
		"idpUserId": pUnmodelled, "q": pUnmodelled,
	},
	RouteUser:       {"userProfileMetadata": pUnmodelled},
	RouteUserGroups: {"first": pInt, "max": pInt, "search": pString, "briefRepresentation": pBool},
	RouteJoinGroup:  {},
	RouteLeaveGroup: {},
	RouteGroups: {
		"search": pString, "exact": pBool, "first": pInt, "max": pInt, "briefRepresentation": pBool,
		"populateHierarchy": pBool, "subGroupsCount": pBool, "q": pUnmodelled,
	},
	RouteCreateGroup: {},
	RouteGroup:       {},
	RouteUpdateGroup: {},
	RouteDeleteGroup: {},
	RouteChildren: {
		"search": pString, "exact": pBool, "first": pInt, "max": pInt, "briefRepresentation": pBool,
		"subGroupsCount": pBool,
	},
	RouteCreateChild: {},
	RouteMembers:     {"first": pInt, "max": pInt, "briefRepresentation": pBool},
	RouteServerInfo:  {},
}

// query is the converted query of one admin request.
type query struct {
	str  map[string]string
	ints map[string]int
	bool map[string]bool
}

func (q query) has(name string) bool {
	_, s := q.str[name]
	_, i := q.ints[name]
	_, b := q.bool[name]
	return s || i || b
}

// intOr returns the integer parameter or def when absent.
func (q query) intOr(name string, def int) int {
	if v, ok := q.ints[name]; ok {
		return v
	}
	return def
}

// boolOr returns the boolean parameter or def when absent.
func (q query) boolOr(name string, def bool) bool {
	if v, ok := q.bool[name]; ok {
		return v
	}
	return def
}

// parseQuery converts the query as Keycloak would. Unknown parameters are ignored, as Keycloak
// ignores them, and recorded; unmodelled declared ones are a 501.
func (s *Server) parseQuery(c *call) (result, bool) {
	decl := declared[c.rt.name]
	q := query{str: map[string]string{}, ints: map[string]int{}, bool: map[string]bool{}}
	raw := c.r.URL.Query()
	names := make([]string, 0, len(raw))
	for name := range raw {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v := raw.Get(name)
		kind, ok := decl[name]
		switch {
		case !ok:
			s.record(&s.ignoredQuery, c.rt.name+": "+name)
		case kind == pUnmodelled:
			s.record(&s.unimplemented, c.rt.name+" ?"+name)
			return errorResult(http.StatusNotImplemented, "keycloaksim does not model query parameter "+name+" of "+c.rt.name), true
		case kind == pInt:
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return errorResult(http.StatusNotFound, "HTTP 404 Not Found"), true
			}
			q.ints[name] = n
		case kind == pBool:
			q.bool[name] = strings.EqualFold(v, "true")
		default:
			q.str[name] = v
		}
	}
	c.q = q
	return result{}, false
}

// page applies first and max the way Keycloak's paginated streams do: a negative or absent
// bound is ignored.
func page[T any](in []T, first, max int) []T {
	if first > 0 {
		if first >= len(in) {
			return in[:0]
		}
		in = in[first:]
	}
	if max >= 0 && max < len(in) {
		in = in[:max]
	}
	return in
}
