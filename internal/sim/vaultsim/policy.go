package vaultsim

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

var policyNameRe = regexp.MustCompile(`^[a-zA-Z0-9_.-]+$`)

// policy serves sys/policies/acl/<name> (body key "policy") and sys/policy/<name> (older API,
// body key "policy" or "rules").
func (c *call) policy(name, readKey string) {
	if !policyNameRe.MatchString(name) || name == "root" {
		c.fail(http.StatusBadRequest, "invalid policy name")
		return
	}
	if !c.allowed() {
		return
	}
	switch c.r.Method {
	case http.MethodGet:
		p, ok := c.s.policies[name]
		if !ok {
			c.fail(http.StatusNotFound, "policy not found")
			return
		}
		text, _ := json.Marshal(map[string]any{"path": toPolicyJSON(p)})
		c.reply(http.StatusOK, map[string]any{"data": map[string]any{"name": name, readKey: string(text)}})
	case http.MethodPut, http.MethodPost:
		if !c.fields("policy", "rules") {
			return
		}
		text, _ := c.body["policy"].(string)
		if text == "" {
			text, _ = c.body["rules"].(string)
		}
		p, ok := parsePolicy(text)
		if !ok {
			c.fail(http.StatusBadRequest, "failed to parse policy: the simulator accepts JSON policies {\"path\": {<path>: {\"capabilities\": [...]}}}")
			return
		}
		c.s.policies[name] = p
		c.noContent()
	case http.MethodDelete:
		delete(c.s.policies, name)
		c.noContent()
	default:
		c.fail(http.StatusMethodNotAllowed, "unsupported operation")
	}
}

func parsePolicy(text string) (map[string][]string, bool) {
	var doc struct {
		Path map[string]struct {
			Capabilities []string `json:"capabilities"`
		} `json:"path"`
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil || len(doc.Path) == 0 {
		return nil, false
	}
	out := map[string][]string{}
	for path, rule := range doc.Path {
		for _, cp := range rule.Capabilities {
			switch cp {
			case "create", "read", "update", "delete", "list", "deny", "patch", "sudo":
			default:
				return nil, false
			}
		}
		out[path] = rule.Capabilities
	}
	return out, true
}

func toPolicyJSON(p map[string][]string) map[string]any {
	out := map[string]any{}
	for path, caps := range p {
		out[path] = map[string]any{"capabilities": caps}
	}
	return out
}

// capability is what the request needs on its path.
func (c *call) capability() []string {
	switch c.r.Method {
	case http.MethodGet:
		if c.r.URL.Query().Get("list") == "true" {
			return []string{"list"}
		}
		return []string{"read"}
	case "LIST":
		return []string{"list"}
	case http.MethodDelete:
		return []string{"delete"}
	}
	return []string{"create", "update"}
}

// allowed answers 403 unless the token's policies grant the request's capability on its path.
func (c *call) allowed() bool {
	if c.tok.root {
		return true
	}
	need := c.capability()
	for _, name := range c.tok.policies {
		for pattern, caps := range c.s.policies[name] {
			if !pathMatches(pattern, c.path) {
				continue
			}
			for _, have := range caps {
				if have == "deny" {
					c.fail(http.StatusForbidden, "permission denied")
					return false
				}
				for _, n := range need {
					if have == n {
						return true
					}
				}
			}
		}
	}
	c.fail(http.StatusForbidden, "permission denied")
	return false
}

// seesMount reports whether the token has any capability under the mount prefix ("auth/x/").
func (c *call) seesMount(prefix string) bool {
	if c.tok.root {
		return true
	}
	for _, name := range c.tok.policies {
		for pattern, caps := range c.s.policies[name] {
			if len(caps) > 0 && !slices.Contains(caps, "deny") && (strings.HasPrefix(pattern, prefix) || pathMatches(pattern, prefix)) {
				return true
			}
		}
	}
	return false
}

func pathMatches(pattern, path string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(path, prefix)
	}
	return pattern == path
}
