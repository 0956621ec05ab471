package vaultsim

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// approle serves auth/<mount>/role/<name>[/role-id|/secret-id].
func (c *call) approle(rest string) {
	parts := strings.Split(rest, "/")
	if len(parts) < 3 || parts[1] != "role" || !c.s.auth[parts[0]] || !policyNameRe.MatchString(parts[2]) || len(parts) > 4 {
		c.fail(http.StatusNotFound, "unsupported path")
		return
	}
	if !c.allowed() {
		return
	}
	key := parts[0] + "/" + parts[2]
	if len(parts) == 4 {
		c.roleSub(key, parts[3])
		return
	}
	switch c.r.Method {
	case http.MethodPost, http.MethodPut:
		c.writeRole(key)
	case http.MethodGet:
		r := c.s.roles[key]
		if r == nil {
			c.fail(http.StatusNotFound, "role not found")
			return
		}
		c.reply(http.StatusOK, map[string]any{"data": map[string]any{"token_policies": r.policies,
			"secret_id_ttl": int(r.secretTTL.Seconds()), "secret_id_num_uses": r.secretUses, "token_num_uses": r.tokenUses,
			"token_ttl": int(r.tokenTTL.Seconds()), "token_max_ttl": int(r.maxTTL.Seconds())}})
	case http.MethodDelete:
		delete(c.s.roles, key)
		for id, sid := range c.s.secrets {
			if sid.role == key {
				delete(c.s.secrets, id)
			}
		}
		c.noContent()
	default:
		c.fail(http.StatusMethodNotAllowed, "unsupported operation")
	}
}

func (c *call) writeRole(key string) {
	if !c.fields("token_policies", "secret_id_ttl", "secret_id_num_uses", "token_num_uses", "token_ttl", "token_max_ttl") {
		return
	}
	r := c.s.roles[key]
	if r == nil {
		r = &role{roleID: newID()}
	}
	var ok bool
	if v, has := c.body["token_policies"]; has {
		if r.policies, ok = stringList(v); !ok {
			c.fail(http.StatusBadRequest, "token_policies: want a list of names")
			return
		}
	}
	for _, d := range []struct {
		key string
		dst *time.Duration
	}{{"secret_id_ttl", &r.secretTTL}, {"token_ttl", &r.tokenTTL}, {"token_max_ttl", &r.maxTTL}} {
		if v, has := c.body[d.key]; has {
			if *d.dst, ok = duration(v); !ok {
				c.fail(http.StatusBadRequest, d.key+": want a duration")
				return
			}
		}
	}
	for _, n := range []struct {
		key string
		dst *int
	}{{"secret_id_num_uses", &r.secretUses}, {"token_num_uses", &r.tokenUses}} {
		if v, has := c.body[n.key]; has {
			f, isNum := v.(float64)
			if !isNum || f < 0 || f != float64(int(f)) {
				c.fail(http.StatusBadRequest, n.key+": want a non-negative whole number")
				return
			}
			*n.dst = int(f)
		}
	}
	c.s.roles[key] = r
	c.noContent()
}

func (c *call) roleSub(key, sub string) {
	r := c.s.roles[key]
	if r == nil {
		c.fail(http.StatusNotFound, "role not found")
		return
	}
	switch {
	case sub == "role-id" && c.r.Method == http.MethodGet:
		c.reply(http.StatusOK, map[string]any{"data": map[string]any{"role_id": r.roleID}})
	case sub == "secret-id" && (c.r.Method == http.MethodPost || c.r.Method == http.MethodPut):
		if !c.fields("metadata") {
			return
		}
		id := newID()
		sid := &secretID{role: key, uses: r.secretUses}
		if r.secretTTL > 0 {
			sid.expires = c.s.now().Add(r.secretTTL)
		}
		c.s.secrets[id] = sid
		c.reply(http.StatusOK, map[string]any{"data": map[string]any{"secret_id": id, "secret_id_accessor": newID(),
			"secret_id_ttl": int(r.secretTTL.Seconds()), "secret_id_num_uses": r.secretUses}})
	default:
		c.fail(http.StatusNotFound, "unsupported path")
	}
}

// login serves auth/<mount>/login.
func (c *call) login(mount string) {
	if !c.s.auth[mount] || c.r.Method != http.MethodPost && c.r.Method != http.MethodPut {
		c.fail(http.StatusNotFound, "unsupported path")
		return
	}
	if !c.fields("role_id", "secret_id") {
		return
	}
	roleID, _ := c.body["role_id"].(string)
	sidText, _ := c.body["secret_id"].(string)
	sid := c.s.secrets[sidText]
	r := c.s.roles[mount+"/"+roleNameOf(c.s, mount, roleID)]
	if r == nil || sid == nil || sid.role != mount+"/"+roleNameOf(c.s, mount, roleID) ||
		(!sid.expires.IsZero() && !c.s.now().Before(sid.expires)) {
		c.fail(http.StatusBadRequest, "invalid role or secret ID")
		return
	}
	if sid.uses > 0 {
		if sid.uses--; sid.uses == 0 {
			delete(c.s.secrets, sidText)
		}
	}
	tokID := "hvs." + strings.ReplaceAll(newID(), "-", "")
	t := &token{policies: append([]string{"default"}, r.policies...), uses: r.tokenUses}
	if r.tokenTTL > 0 {
		t.expires = c.s.now().Add(r.tokenTTL)
	}
	c.s.tokens[tokID] = t
	c.reply(http.StatusOK, map[string]any{"auth": map[string]any{"client_token": tokID, "accessor": newID(),
		"policies": t.policies, "token_policies": t.policies, "lease_duration": int(r.tokenTTL.Seconds()), "renewable": true}})
}

func roleNameOf(s *Server, mount, roleID string) string {
	for key, r := range s.roles {
		if r.roleID == roleID && strings.HasPrefix(key, mount+"/") {
			return strings.TrimPrefix(key, mount+"/")
		}
	}
	return ""
}

func (c *call) lookupSelf() {
	t := c.tok
	ttl := 0
	if !t.expires.IsZero() {
		ttl = int(t.expires.Sub(c.s.now()).Seconds())
	}
	policies := t.policies
	if t.root {
		policies = []string{"root"}
	}
	c.reply(http.StatusOK, map[string]any{"data": map[string]any{"policies": policies, "ttl": ttl,
		"renewable": !t.root && ttl > 0, "num_uses": t.uses}})
}

func (c *call) authMounts() {
	if !c.allowed() { // Vault: read on sys/auth, which operator policies rarely grant
		return
	}
	out := map[string]any{"token/": map[string]any{"type": "token"}}
	for m := range c.s.auth {
		out[m+"/"] = map[string]any{"type": "approle"}
	}
	c.reply(http.StatusOK, map[string]any{"data": out})
}

func stringList(v any) ([]string, bool) {
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(l))
	for _, x := range l {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// duration reads Vault's durations: "60m", "1h30m", "90s", "3600", or a number of seconds.
func duration(v any) (time.Duration, bool) {
	switch x := v.(type) {
	case float64:
		return time.Duration(x) * time.Second, x >= 0
	case string:
		if n, err := strconv.Atoi(x); err == nil && n >= 0 {
			return time.Duration(n) * time.Second, true
		}
		d, err := time.ParseDuration(x)
		return d, err == nil && d >= 0
	}
	return 0, false
}
