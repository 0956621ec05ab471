package openstacksim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"time"
)

const opToken = "keystone POST /v3/auth/tokens"

type ref struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
}

type authRequest struct {
	Auth struct {
		Identity struct {
			Methods  []string `json:"methods"`
			Password *struct {
				User struct {
					ID       string `json:"id,omitempty"`
					Name     string `json:"name,omitempty"`
					Domain   *ref   `json:"domain,omitempty"`
					Password string `json:"password"`
				} `json:"user"`
			} `json:"password"`
		} `json:"identity"`
		Scope *struct {
			Project *struct {
				ID     string `json:"id,omitempty"`
				Name   string `json:"name,omitempty"`
				Domain *ref   `json:"domain,omitempty"`
			} `json:"project"`
		} `json:"scope,omitempty"`
	} `json:"auth"`
}

// issueToken serves POST /v3/auth/tokens (password method, project scope).
func (c *call) issueToken() {
	var req authRequest
	dec := json.NewDecoder(bytes.NewReader(c.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		c.fail(http.StatusBadRequest, "Invalid authentication request: "+err.Error())
		return
	}
	id := req.Auth.Identity
	if len(id.Methods) != 1 || id.Methods[0] != "password" || id.Password == nil {
		c.fail(http.StatusBadRequest, "only the password method is supported")
		return
	}
	st := c.s.st
	pu := id.Password.User
	u := st.findUser(pu.ID, pu.Name, st.domainOf(pu.Domain))
	if u == nil || !u.Enabled || u.Password != pu.Password {
		c.fail(http.StatusUnauthorized, "The request you have made requires authentication.")
		return
	}
	if req.Auth.Scope == nil || req.Auth.Scope.Project == nil {
		c.fail(http.StatusBadRequest, "the simulator issues project-scoped tokens only")
		return
	}
	sp := req.Auth.Scope.Project
	p := st.findProject(sp.ID, sp.Name, st.domainOf(sp.Domain))
	if p == nil || !st.hasAnyRole(u.ID, p.ID) {
		c.fail(http.StatusUnauthorized, "The request you have made requires authentication.")
		return
	}
	tok := &token{id: "gAAAA" + newID(false) + newID(false), userID: u.ID, projectID: p.ID,
		admin: st.assignments[assignment{u.ID, p.ID, st.roleByName("admin").ID}], expires: time.Now().Add(c.s.opts.TokenTTL)}
	st.tokens[tok.id] = tok
	c.w.Header().Set("X-Subject-Token", tok.id)
	c.reply(http.StatusCreated, map[string]any{"token": c.tokenBody(tok, u, p)})
}

func (c *call) tokenBody(tok *token, u *user, p *project) map[string]any {
	st := c.s.st
	var roles []map[string]string
	for a := range st.assignments {
		if a.userID == u.ID && a.projectID == p.ID {
			roles = append(roles, map[string]string{"id": a.roleID, "name": st.roles[a.roleID].Name})
		}
	}
	d := st.domains[p.DomainID]
	return map[string]any{
		"methods": []string{"password"}, "expires_at": tok.expires.UTC().Format("2006-01-02T15:04:05.000000Z"),
		"issued_at": time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"), "audit_ids": []string{newID(false)[:22]},
		"user":    map[string]any{"id": u.ID, "name": u.Name, "domain": map[string]string{"id": u.DomainID, "name": st.domains[u.DomainID].Name}},
		"project": map[string]any{"id": p.ID, "name": p.Name, "domain": map[string]string{"id": d.ID, "name": d.Name}},
		"roles":   roles, "is_domain": false, "catalog": c.catalog(p.ID),
	}
}

// catalog points every service back at this simulator, on the host the client used.
func (c *call) catalog(projectID string) []map[string]any {
	base := "http://" + c.r.Host
	entry := func(typ, name, url string) map[string]any {
		var eps []map[string]any
		for _, iface := range []string{"public", "internal", "admin"} {
			eps = append(eps, map[string]any{"id": newID(false), "interface": iface, "region": c.s.opts.Region,
				"region_id": c.s.opts.Region, "url": url})
		}
		return map[string]any{"id": newID(false), "type": typ, "name": name, "endpoints": eps}
	}
	all := []map[string]any{
		entry("identity", "keystone", base+"/identity/v3/"),
		entry("compute", "nova", base+"/compute/v2.1"),
		entry("volumev3", "cinderv3", base+"/volume/v3/"+projectID),
		entry("network", "neutron", base+"/network"),
		entry("image", "glance", base+"/image"),
		entry("load-balancer", "octavia", base+"/load-balancer"),
	}
	out := all[:0]
	for _, e := range all {
		if !slices.Contains(c.s.opts.Without, e["type"].(string)) {
			out = append(out, e)
		}
	}
	return out
}

// validateToken serves HEAD /v3/auth/tokens.
func (c *call) validateToken() {
	tok := c.s.st.tokens[c.r.Header.Get("X-Subject-Token")]
	if tok == nil || time.Now().After(tok.expires) {
		c.noContent(http.StatusNotFound)
		return
	}
	c.noContent(http.StatusOK)
}

func (st *state) domainOf(r *ref) string {
	if r == nil {
		return ""
	}
	if r.ID != "" {
		return r.ID
	}
	for _, d := range st.domains {
		if d.Name == r.Name {
			return d.ID
		}
	}
	return "no-such-domain"
}

func (st *state) findUser(id, name, domainID string) *user {
	if id != "" {
		return st.users[id]
	}
	for _, u := range st.users {
		if u.Name == name && u.DomainID == domainID {
			return u
		}
	}
	return nil
}

func (st *state) findProject(id, name, domainID string) *project {
	if id != "" {
		return st.projects[id]
	}
	for _, p := range st.projects {
		if p.Name == name && p.DomainID == domainID {
			return p
		}
	}
	return nil
}

func (st *state) hasAnyRole(userID, projectID string) bool {
	for a := range st.assignments {
		if a.userID == userID && a.projectID == projectID {
			return true
		}
	}
	return false
}

func (c *call) listDomains() {
	var out []map[string]any
	for _, d := range c.s.st.domains {
		if n := c.query("name"); n != "" && d.Name != n {
			continue
		}
		out = append(out, map[string]any{"id": d.ID, "name": d.Name, "enabled": true, "description": ""})
	}
	c.reply(http.StatusOK, map[string]any{"domains": nonNil(out), "links": c.links()})
}

func (c *call) listRoles() {
	var out []map[string]any
	for _, r := range c.s.st.roles {
		if n := c.query("name"); n != "" && r.Name != n {
			continue
		}
		out = append(out, map[string]any{"id": r.ID, "name": r.Name, "domain_id": nil})
	}
	c.reply(http.StatusOK, map[string]any{"roles": nonNil(out), "links": c.links()})
}

func (c *call) links() map[string]any {
	return map[string]any{"self": "http://" + c.r.Host + c.r.URL.RequestURI(), "next": nil, "previous": nil}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
