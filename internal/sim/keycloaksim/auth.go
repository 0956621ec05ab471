package keycloaksim

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"mime"
	"net/http"
	"strings"
	"time"
)

// Realm-management roles the simulator understands.
const (
	RoleRealmAdmin  = "realm-admin"
	RoleManageUsers = "manage-users"
	RoleViewUsers   = "view-users"
	RoleQueryGroups = "query-groups"
	RoleQueryUsers  = "query-users"
	RoleViewRealm   = "view-realm"
)

// AdminClientID is the only client the token endpoint accepts (public, like Keycloak's).
const AdminClientID = "admin-cli"

type tokenInfo struct {
	realm   string
	refresh bool
	sid     string
	expires time.Time
}

// handleToken answers POST /realms/{realm}/protocol/openid-connect/token.
func (s *Server) handleToken(c *call) result {
	s.mu.Lock()
	_, realmOK := s.realms[c.rt.realm]
	s.mu.Unlock()
	if !realmOK {
		return errorResult(http.StatusNotFound, "Realm does not exist")
	}
	if mt, _, err := mime.ParseMediaType(c.r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		// assumption: Keycloak's form endpoint reads no parameters from other bodies.
		return oauthResult(http.StatusBadRequest, "invalid_request", "Missing form parameter: grant_type")
	}
	if err := c.r.ParseForm(); err != nil {
		return oauthResult(http.StatusBadRequest, "invalid_request", "Missing form parameter: grant_type")
	}
	form := c.r.PostForm
	grant := form.Get("grant_type")
	if grant == "" {
		return oauthResult(http.StatusBadRequest, "invalid_request", "Missing form parameter: grant_type")
	}
	if form.Get("client_id") != AdminClientID {
		return oauthResult(http.StatusUnauthorized, "invalid_client", "Invalid client or Invalid client credentials")
	}
	switch grant {
	case "password":
		return s.passwordGrant(c.rt.realm, form.Get("username"), form.Get("password"))
	case "refresh_token":
		return s.refreshGrant(c.rt.realm, form.Get("refresh_token"))
	}
	return oauthResult(http.StatusBadRequest, "unsupported_grant_type", "Unsupported grant_type")
}

func (s *Server) passwordGrant(realm, username, password string) result {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := realm == s.admin.Realm && strings.EqualFold(username, s.admin.Username) &&
		hmac.Equal([]byte(password), []byte(s.admin.Password))
	if !ok {
		return oauthResult(http.StatusUnauthorized, "invalid_grant", "Invalid user credentials")
	}
	s.grants["password"]++
	return s.issue(realm, newID())
}

func (s *Server) refreshGrant(realm, token string) result {
	s.mu.Lock()
	defer s.mu.Unlock()
	info, ok := s.tokens[token]
	if !ok || !info.refresh || info.realm != realm {
		return oauthResult(http.StatusBadRequest, "invalid_grant", "Invalid refresh token")
	}
	if !s.now().Before(info.expires) {
		return oauthResult(http.StatusBadRequest, "invalid_grant", "Token is not active")
	}
	s.grants["refresh_token"]++
	return s.issue(realm, info.sid)
}

// issue mints an access and a refresh token for a session. Callers hold s.mu.
func (s *Server) issue(realm, sid string) result {
	now := s.now()
	access := s.mint(realm, sid, "Bearer", now, s.opts.TokenTTL)
	refresh := s.mint(realm, sid, "Refresh", now, s.opts.RefreshTTL)
	s.tokens[access] = &tokenInfo{realm: realm, sid: sid, expires: now.Add(s.opts.TokenTTL)}
	s.tokens[refresh] = &tokenInfo{realm: realm, sid: sid, refresh: true, expires: now.Add(s.opts.RefreshTTL)}
	return okResult(map[string]any{
		"access_token":       access,
		"expires_in":         int(s.opts.TokenTTL / time.Second),
		"refresh_expires_in": int(s.opts.RefreshTTL / time.Second),
		"refresh_token":      refresh,
		"token_type":         "Bearer",
		"not-before-policy":  0,
		"session_state":      sid,
		"scope":              "profile email",
	})
}

// mint builds a JWT-shaped token (HS256 over a random key); the simulator validates tokens by
// lookup. Access tokens carry the admin's roles in resource_access, as Keycloak's do, unless
// Options.LightweightTokens.
func (s *Server) mint(realm, sid, typ string, now time.Time, ttl time.Duration) string {
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	body := map[string]any{
		"exp": now.Add(ttl).Unix(), "iat": now.Unix(), "jti": newID(), "typ": typ,
		"iss": "keycloaksim/realms/" + realm, "azp": AdminClientID, "sid": sid, "scope": "profile email",
	}
	if typ == "Bearer" && !s.opts.LightweightTokens {
		body["resource_access"] = s.tokenRoles()
	}
	claims, _ := json.Marshal(body)
	payload := header + "." + enc.EncodeToString(claims)
	mac := hmac.New(sha256.New, s.key)
	mac.Write([]byte(payload))
	return payload + "." + enc.EncodeToString(mac.Sum(nil))
}

// authenticate checks the bearer token and returns the caller's effective roles. Tokens of the
// admin user's realm are honoured on every realm (a master-realm administrator).
func (s *Server) authenticate(r *http.Request) (map[string]bool, bool) {
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || raw == "" {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	info, ok := s.tokens[strings.TrimSpace(raw)]
	if !ok || info.refresh || !s.now().Before(info.expires) {
		return nil, false
	}
	roles := map[string]bool{}
	for _, role := range s.admin.Roles {
		roles[role] = true
	}
	return roles, true
}

// can reports whether the caller holds role, directly or through a stronger one.
func (c *call) can(role string) bool {
	if c.roles[RoleRealmAdmin] {
		return true
	}
	switch role {
	case RoleViewUsers:
		return c.roles[RoleViewUsers] || c.roles[RoleManageUsers]
	case RoleQueryGroups:
		return c.roles[RoleQueryGroups] || c.can(RoleViewUsers)
	case RoleQueryUsers:
		return c.roles[RoleQueryUsers] || c.can(RoleViewUsers)
	}
	return c.roles[role]
}

// anyAdminRole reports whether the caller holds any realm-management role at all.
func (c *call) anyAdminRole() bool { return len(c.roles) > 0 }

func forbidden() result { return errorResult(http.StatusForbidden, "HTTP 403 Forbidden") }
