package keycloaksim

import (
	"crypto/rand"
	"encoding/hex"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// maxNameLen is the width of KEYCLOAK_GROUP.NAME (varchar(255), counted in characters).
const maxNameLen = 255

type user struct {
	id       string
	username string // lower-case, as Keycloak stores it
	created  int64  // ms since epoch
	groups   map[string]bool
}

type group struct {
	id       string
	name     string
	parent   string // "" for a top-level group
	attrs    map[string][]string
	children map[string]bool
	members  map[string]bool // user ids
}

type realm struct {
	id     string
	name   string
	users  map[string]*user
	groups map[string]*group
}

func newRealm(name string) *realm {
	return &realm{id: newID(), name: name, users: map[string]*user{}, groups: map[string]*group{}}
}

func (r *realm) addUser(id, username string, now time.Time) *user {
	u := &user{id: id, username: strings.ToLower(username), created: now.UnixMilli(), groups: map[string]bool{}}
	r.users[id] = u
	return u
}

func (r *realm) userByName(username string) *user {
	username = strings.ToLower(username)
	for _, u := range r.users {
		if u.username == username {
			return u
		}
	}
	return nil
}

// sortedUsers returns users ordered by username, as Keycloak's queries order them.
func sortedUsers(in []*user) []*user {
	sort.Slice(in, func(i, j int) bool { return in[i].username < in[j].username })
	return in
}

// sortedGroups returns groups ordered by name.
func sortedGroups(in []*group) []*group {
	sort.Slice(in, func(i, j int) bool {
		if in[i].name != in[j].name {
			return in[i].name < in[j].name
		}
		return in[i].id < in[j].id
	})
	return in
}

func (r *realm) topLevel() []*group {
	var out []*group
	for _, g := range r.groups {
		if g.parent == "" {
			out = append(out, g)
		}
	}
	return sortedGroups(out)
}

func (r *realm) childrenOf(g *group) []*group {
	out := make([]*group, 0, len(g.children))
	for id := range g.children {
		out = append(out, r.groups[id])
	}
	return sortedGroups(out)
}

// siblingNamed finds a group called name under parent ("" = top level).
func (r *realm) siblingNamed(parent, name string) *group {
	if parent == "" {
		for _, g := range r.groups {
			if g.parent == "" && g.name == name {
				return g
			}
		}
		return nil
	}
	for id := range r.groups[parent].children {
		if g := r.groups[id]; g.name == name {
			return g
		}
	}
	return nil
}

func (r *realm) createGroup(parent, name string, attrs map[string][]string) *group {
	g := &group{id: newID(), name: name, parent: parent, attrs: copyAttrs(attrs),
		children: map[string]bool{}, members: map[string]bool{}}
	r.groups[g.id] = g
	if parent != "" {
		r.groups[parent].children[g.id] = true
	}
	return g
}

// deleteGroup removes g, its subtree and every membership in them.
func (r *realm) deleteGroup(g *group) {
	for id := range g.children {
		r.deleteGroup(r.groups[id])
	}
	for uid := range g.members {
		if u := r.users[uid]; u != nil {
			delete(u.groups, g.id)
		}
	}
	if g.parent != "" {
		if p := r.groups[g.parent]; p != nil {
			delete(p.children, g.id)
		}
	}
	delete(r.groups, g.id)
}

// ancestry returns g's chain from its top-level ancestor down to g.
func (r *realm) ancestry(g *group) []*group {
	var chain []*group
	for cur := g; cur != nil; cur = r.groups[cur.parent] {
		chain = append([]*group{cur}, chain...)
		if cur.parent == "" {
			break
		}
	}
	return chain
}

// path is the group path: every name from the root, each preceded by "/", with "/" inside a
// name escaped as "~/" (Keycloak 23+).
func (r *realm) path(g *group) string {
	var b strings.Builder
	for _, a := range r.ancestry(g) {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(a.name, "/", "~/"))
	}
	return b.String()
}

// searchByName matches the whole tree: exact is case-sensitive equality, otherwise a
// case-insensitive LIKE '%search%' (searchForGroupByNameStream, Keycloak 26).
func (r *realm) searchByName(search string, exact bool) []*group {
	var out []*group
	pattern := "%" + strings.ToLower(search) + "%"
	for _, g := range r.groups {
		if exact && g.name == search || !exact && like(strings.ToLower(g.name), pattern) {
			out = append(out, g)
		}
	}
	return sortedGroups(out)
}

// matchChild is the children endpoint's filter: exact is a case-sensitive LIKE without added
// wildcards, otherwise a case-insensitive LIKE '%search%' (JpaGroupAdapter, Keycloak 26).
func matchChild(name, search string, exact bool) bool {
	if exact {
		return like(name, search)
	}
	return like(strings.ToLower(name), "%"+strings.ToLower(search)+"%")
}

// like reports whether s matches the SQL LIKE pattern p ('%' any run, '_' any one character).
// assumption: no escape character is configured (Keycloak passes the search through unescaped).
func like(s, p string) bool {
	if p == "" {
		return s == ""
	}
	r, size := utf8.DecodeRuneInString(p)
	switch r {
	case '%':
		for i := 0; i <= len(s); {
			if like(s[i:], p[size:]) {
				return true
			}
			if i == len(s) {
				break
			}
			_, n := utf8.DecodeRuneInString(s[i:])
			i += n
		}
		return false
	case '_':
		if s == "" {
			return false
		}
		_, n := utf8.DecodeRuneInString(s)
		return like(s[n:], p[size:])
	}
	sr, n := utf8.DecodeRuneInString(s)
	return s != "" && sr == r && like(s[n:], p[size:])
}

func copyAttrs(in map[string][]string) map[string][]string {
	out := make(map[string][]string, len(in))
	for k, v := range in {
		out[k] = append([]string{}, v...)
	}
	return out
}

// newID returns a random UUID (version 4), as Keycloak generates ids.
func newID() string {
	b := randomBytes(16)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("keycloaksim: crypto/rand: " + err.Error())
	}
	return b
}

func nameTooLong(name string) bool { return utf8.RuneCountInString(name) > maxNameLen }
