package vaultsim

import (
	"net/http"
	"sort"
)

// capabilitiesSelf serves POST sys/capabilities-self: the calling token's capabilities on each
// path ({"path": p} or {"paths": [...]}), as Vault answers it — every path as a key, plus
// "capabilities" (the union), both at the top level and under "data".
func (c *call) capabilitiesSelf() {
	if c.r.Method != http.MethodPost && c.r.Method != http.MethodPut {
		c.fail(http.StatusMethodNotAllowed, "unsupported operation")
		return
	}
	if !c.fields("path", "paths", "token") {
		return
	}
	var paths []string
	if p, ok := c.body["path"].(string); ok && p != "" {
		paths = append(paths, p)
	}
	if l, has := c.body["paths"]; has {
		more, ok := stringList(l)
		if !ok {
			c.fail(http.StatusBadRequest, "paths: want a list of strings")
			return
		}
		paths = append(paths, more...)
	}
	if len(paths) == 0 {
		c.fail(http.StatusBadRequest, "missing paths")
		return
	}
	out := map[string]any{}
	union := map[string]bool{}
	for _, p := range paths {
		caps := c.capsOn(p)
		out[p] = caps
		for _, cp := range caps {
			union[cp] = true
		}
	}
	all := make([]string, 0, len(union))
	for cp := range union {
		all = append(all, cp)
	}
	sort.Strings(all)
	out["capabilities"] = all
	body := map[string]any{"data": out}
	for k, v := range out {
		body[k] = v
	}
	c.reply(http.StatusOK, body)
}

// capsOn is the token's capabilities on path: "root" for the root token, "deny" when any
// matching rule denies, else the union of the matching rules ("deny" when none match).
func (c *call) capsOn(path string) []string {
	if c.tok.root {
		return []string{"root"}
	}
	set := map[string]bool{}
	for _, name := range c.tok.policies {
		for pattern, caps := range c.s.policies[name] {
			if !pathMatches(pattern, path) {
				continue
			}
			for _, cp := range caps {
				if cp == "deny" {
					return []string{"deny"}
				}
				set[cp] = true
			}
		}
	}
	if len(set) == 0 {
		return []string{"deny"}
	}
	out := make([]string, 0, len(set))
	for cp := range set {
		out = append(out, cp)
	}
	sort.Strings(out)
	return out
}

// AddToken makes a token with the given policies (no TTL, unlimited uses), as an operator's
// `vault token create -policy=…` would; tests use it for accounts with fewer rights than root.
func (s *Server) AddToken(id string, policies ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[id] = &token{policies: append([]string{"default"}, policies...)}
}

// SetPolicy writes an ACL policy (path → capabilities), as `vault policy write` would.
func (s *Server) SetPolicy(name string, rules map[string][]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.policies[name] = rules
}
