package keycloaksim

import (
	"fmt"
	"maps"
	"sort"
	"strings"
)

// User is a user as tests see it.
type User struct {
	ID       string
	Username string
}

// AddRealm creates an empty realm (no-op when it exists).
func (s *Server) AddRealm(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.realms[name]; !ok {
		s.realms[name] = newRealm(name)
	}
}

// AddUser creates a user in the managed realm with a random id. Keycloak stores usernames in
// lower case, so the returned Username is lower-cased.
func (s *Server) AddUser(username string) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.realms[s.opts.Realm]
	if u := r.userByName(username); u != nil {
		return User{ID: u.id, Username: u.username}
	}
	u := r.addUser(newID(), username, s.now())
	return User{ID: u.id, Username: u.username}
}

// SetUserID changes the id of a user of the managed realm (for by-id lookups where the id is
// chosen by the test, e.g. equal to a Waldur username). Memberships move with the user.
func (s *Server) SetUserID(username, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.realms[s.opts.Realm]
	u := r.userByName(username)
	if u == nil {
		return fmt.Errorf("keycloaksim: no user %q", username)
	}
	if _, taken := r.users[id]; taken && id != u.id {
		return fmt.Errorf("keycloaksim: user id %q is taken", id)
	}
	for gid := range u.groups {
		g := r.groups[gid]
		delete(g.members, u.id)
		g.members[id] = true
	}
	delete(r.users, u.id)
	u.id = id
	r.users[id] = u
	return nil
}

// RemoveUser deletes a user of the managed realm and its memberships.
func (s *Server) RemoveUser(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.realms[s.opts.Realm]
	u := r.users[id]
	if u == nil {
		return false
	}
	for gid := range u.groups {
		delete(r.groups[gid].members, id)
	}
	delete(r.users, id)
	return true
}

// AddGroup creates a group directly (no request is counted); parentID "" creates a top-level
// group. It refuses duplicates like Keycloak does.
func (s *Server) AddGroup(parentID, name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.realms[s.opts.Realm]
	if parentID != "" && r.groups[parentID] == nil {
		return "", fmt.Errorf("keycloaksim: no group %q", parentID)
	}
	if r.siblingNamed(parentID, name) != nil {
		return "", fmt.Errorf("keycloaksim: group %q exists under %q", name, parentID)
	}
	return r.createGroup(parentID, name, nil).id, nil
}

// AddMember puts a user into a group directly.
func (s *Server) AddMember(userID, groupID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.realms[s.opts.Realm]
	u, g := r.users[userID], r.groups[groupID]
	if u == nil || g == nil {
		return fmt.Errorf("keycloaksim: no user %q or group %q", userID, groupID)
	}
	u.groups[groupID], g.members[userID] = true, true
	return nil
}

// Groups returns the managed realm's group tree as path → sorted member usernames.
func (s *Server) Groups() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.realms[s.opts.Realm]
	out := make(map[string][]string, len(r.groups))
	for _, g := range r.groups {
		members := []string{}
		for uid := range g.members {
			members = append(members, r.users[uid].username)
		}
		sort.Strings(members)
		out[r.path(g)] = members
	}
	return out
}

// GroupID returns the id of the group at path ("/parent/child") in the managed realm.
func (s *Server) GroupID(path string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.realms[s.opts.Realm]
	for _, g := range r.groups {
		if r.path(g) == path {
			return g.id, true
		}
	}
	return "", false
}

// GroupAttributes returns a copy of the attributes of the group at path.
func (s *Server) GroupAttributes(path string) map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.realms[s.opts.Realm]
	for _, g := range r.groups {
		if r.path(g) == path {
			return copyAttrs(g.attrs)
		}
	}
	return nil
}

// Calls returns the number of requests per route name (see the Route constants).
func (s *Server) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.calls)
}

// ResetCalls zeroes the request counters.
func (s *Server) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = map[string]int{}
}

// AdminCalls is the number of admin API requests (every route but the token endpoint).
func (s *Server) AdminCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for route, c := range s.calls {
		if route != RouteToken {
			n += c
		}
	}
	return n
}

// TokenFetches is the number of tokens issued (password and refresh_token grants).
func (s *Server) TokenFetches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grants["password"] + s.grants["refresh_token"]
}

// TokenGrants returns the number of tokens issued per grant type.
func (s *Server) TokenGrants() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.grants)
}

// ExpireTokens revokes every access token (refresh tokens stay valid), so the next admin
// request with a cached token gets a 401.
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t, info := range s.tokens {
		if !info.refresh {
			delete(s.tokens, t)
		}
	}
}

// RevokeSessions revokes every access and refresh token, as an administrator logging all
// sessions out does: cached tokens get 401 and refresh grants fail.
func (s *Server) RevokeSessions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = map[string]*tokenInfo{}
}

// SetAdminRoles replaces the admin user's realm-management roles; it applies to tokens already
// issued, as Keycloak resolves rights per request.
func (s *Server) SetAdminRoles(roles ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.admin.Roles = append([]string{}, roles...)
}

// IgnoredQuery lists query parameters Keycloak would ignore that clients sent, as "route: name".
func (s *Server) IgnoredQuery() []string { return s.snapshot(&s.ignoredQuery) }

// IgnoredFields lists unknown JSON properties clients sent, as "route: name".
func (s *Server) IgnoredFields() []string { return s.snapshot(&s.ignoredFields) }

// Unimplemented lists requests Keycloak would serve but the simulator answered 501.
func (s *Server) Unimplemented() []string { return s.snapshot(&s.unimplemented) }

func (s *Server) snapshot(list *[]string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]string(nil), *list...)
	sort.Strings(out)
	return compact(out)
}

func compact(in []string) []string {
	out := in[:0]
	for i, v := range in {
		if i == 0 || v != in[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// String summarises the simulator state for test failure messages.
func (s *Server) String() string {
	groups := s.Groups()
	paths := make([]string, 0, len(groups))
	for p := range groups {
		paths = append(paths, p+"="+strings.Join(groups[p], ","))
	}
	sort.Strings(paths)
	return "keycloaksim{" + strings.Join(paths, " ") + "}"
}
