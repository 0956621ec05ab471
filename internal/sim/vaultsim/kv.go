package vaultsim

import (
	"net/http"
	"strings"
)

// kvRoute serves <mount>/data/<path> (read, write with optional check-and-set) and
// <mount>/metadata/<path> (delete all versions) on KV version 2 mounts.
func (c *call) kvRoute() {
	mount, rest, _ := strings.Cut(c.path, "/")
	kind, rel, _ := strings.Cut(rest, "/")
	if !c.s.kvMounts[mount] || rel == "" || (kind != "data" && kind != "metadata") {
		c.fail(http.StatusNotFound, "unsupported path")
		return
	}
	if !c.allowed() {
		return
	}
	key := mount + "/" + rel
	switch {
	case kind == "data" && c.r.Method == http.MethodGet:
		data, ok := c.s.kv[key]
		if !ok {
			c.reply(http.StatusNotFound, map[string]any{"errors": []string{}})
			return
		}
		c.reply(http.StatusOK, map[string]any{"data": map[string]any{"data": data,
			"metadata": map[string]any{"version": c.s.versions[key], "destroyed": false, "deletion_time": ""}}})
	case kind == "data" && (c.r.Method == http.MethodPost || c.r.Method == http.MethodPut):
		if !c.fields("data", "options") {
			return
		}
		data, ok := c.body["data"].(map[string]any)
		if !ok {
			c.fail(http.StatusBadRequest, "no data provided")
			return
		}
		if !c.checkAndSet(key) {
			return
		}
		c.s.kv[key] = data
		c.s.versions[key]++
		c.reply(http.StatusOK, map[string]any{"data": map[string]any{"version": c.s.versions[key]}})
	case kind == "metadata" && c.r.Method == http.MethodDelete:
		delete(c.s.kv, key)
		delete(c.s.versions, key)
		c.noContent()
	default:
		c.fail(http.StatusMethodNotAllowed, "unsupported operation")
	}
}

// checkAndSet applies options.cas as KV v2 does: with cas the write happens only when the
// secret's current version is cas (0: the secret does not exist); otherwise 400.
func (c *call) checkAndSet(key string) bool {
	opts, _ := c.body["options"].(map[string]any)
	raw, ok := opts["cas"]
	if !ok {
		return true
	}
	cas, isNum := raw.(float64)
	if !isNum || cas < 0 || cas != float64(int(cas)) {
		c.fail(http.StatusBadRequest, "invalid cas parameter")
		return false
	}
	if int(cas) != c.s.versions[key] {
		c.fail(http.StatusBadRequest, "check-and-set parameter did not match the current version")
		return false
	}
	return true
}

// mountInfo answers sys/internal/ui/mounts/<path>: the client's KV version detection, and the
// auth method at auth/<mount>. Like Vault it shows a mount only to a token that has some
// capability under it (or root).
func (c *call) mountInfo(path string) {
	if rest, ok := strings.CutPrefix(path, "auth/"); ok {
		mount, _, _ := strings.Cut(rest, "/")
		if !c.s.auth[mount] || !c.seesMount("auth/"+mount+"/") {
			c.fail(http.StatusBadRequest, "no mount found at "+path)
			return
		}
		c.reply(http.StatusOK, map[string]any{"data": map[string]any{"path": mount + "/", "type": "approle"}})
		return
	}
	mount, _, _ := strings.Cut(path, "/")
	if !c.s.kvMounts[mount] || !c.seesMount(mount+"/") {
		c.fail(http.StatusBadRequest, "no mount found at "+path)
		return
	}
	c.reply(http.StatusOK, map[string]any{"data": map[string]any{"path": mount + "/", "type": "kv",
		"options": map[string]any{"version": "2"}}})
}

// Secret returns the latest data at "<mount>/<path>" (nil when absent), for tests.
func (s *Server) Secret(path string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kv[path]
}

// Policy reports whether a policy exists, for tests.
func (s *Server) Policy(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.policies[name]
	return ok
}

// Role reports whether an AppRole exists ("<mount>/<name>"), for tests.
func (s *Server) Role(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.roles[key]
	return ok
}
