package keycloak

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/Nerzal/gocloak/v13"

	"github.com/waldur/site-agent/internal/failure"
)

// Rights the agent needs in the managed realm, as Keycloak's admin permission checks
// (GroupPermissions, UserPermissions) grant them without fine-grained admin permissions:
// creating top-level and child groups, deleting them and adding or removing members need
// manage-users; listing groups needs query-groups, view-users or manage-users; reading members
// and looking users up need view-users or query-users, which manage-users implies. realm-admin
// includes them all (and a master-realm "admin" includes realm-admin of every realm).
const (
	roleManageUsers = "manage-users"
	roleRealmAdmin  = "realm-admin"
)

// CheckRights proves that the admin user may create groups and manage members of the managed
// realm, and says how: from the roles its access token carries for the realm's admin client
// (realm-management when the user lives in the managed realm, "<realm>-realm" in its own realm
// otherwise; Keycloak puts the effective roles there, composites expanded), or, for tokens
// without role claims (lightweight access tokens), from the access flags Keycloak reports on a
// group. It costs one request (listing one group), which also proves groups can be read.
func (c *Client) CheckRights(ctx context.Context) (string, error) {
	first, one, brief := 0, 1, false
	var groups []*gocloak.Group
	err := c.do(ctx, fmt.Sprintf("list groups of realm %q", c.cfg.Realm), func(ctx context.Context, token string) error {
		var err error
		groups, err = c.gc.GetGroups(ctx, token, c.realmSeg(), gocloak.GetGroupsParams{First: &first, Max: &one, BriefRepresentation: &brief})
		return err
	})
	if failure.HasStatus(err, http.StatusForbidden) {
		return "", c.missingRights(err, "may not even list groups")
	}
	if err != nil {
		return "", err
	}
	client := c.adminClient()
	roles, known := c.tokenRoles(client)
	switch {
	case known && (slices.Contains(roles, roleManageUsers) || slices.Contains(roles, roleRealmAdmin)):
		return fmt.Sprintf("%q holds %s of %s: may create groups and manage members of realm %q",
			c.cfg.Username, grantedRole(roles), client, c.cfg.Realm), nil
	case known:
		held := "none"
		if len(roles) > 0 {
			held = strings.Join(roles, ", ")
		}
		return "", c.missingRights(nil, fmt.Sprintf("holds only %s of %s", held, client))
	}
	if len(groups) == 1 && groups[0].Access != nil {
		acc := *groups[0].Access
		if acc["manage"] && acc["manageMembership"] {
			return fmt.Sprintf("the token names no roles; Keycloak grants %q manage and manageMembership on group %q", c.cfg.Username, deref(groups[0].Name)), nil
		}
		return "", c.missingRights(nil, fmt.Sprintf("may not manage group %q or its members", deref(groups[0].Name)))
	}
	return "", c.missingRights(nil, "could not be checked: the access token names no roles (lightweight tokens?) and the realm has no group to ask about")
}

// missingRights is the public error naming the role to grant.
func (c *Client) missingRights(cause error, what string) error {
	msg := fmt.Sprintf("keycloak user %q %s: give it the client role %s (or %s) of %s, which creating groups and managing members need",
		c.cfg.Username, what, roleManageUsers, roleRealmAdmin, c.adminClient())
	if cause == nil {
		return failure.Errorf("%s", msg)
	}
	return failure.Wrap(cause, msg)
}

func grantedRole(roles []string) string {
	if slices.Contains(roles, roleManageUsers) {
		return roleManageUsers
	}
	return roleRealmAdmin
}

// adminClient is the client that holds the admin roles for the managed realm.
func (c *Client) adminClient() string {
	if c.cfg.UserRealm == c.cfg.Realm {
		return "realm-management"
	}
	return c.cfg.Realm + "-realm"
}

// tokenRoles reads the roles of client from the cached access token's resource_access claim;
// known is false when the token carries no resource_access at all. The token is the client's own
// and is only read here, never trusted for anything but this report.
func (c *Client) tokenRoles(client string) (roles []string, known bool) {
	c.tokens.mu.Lock()
	tok := c.tokens.access
	c.tokens.mu.Unlock()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, false
	}
	data, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return nil, false
	}
	var claims struct {
		ResourceAccess map[string]struct {
			Roles []string `json:"roles"`
		} `json:"resource_access"`
	}
	if json.Unmarshal(data, &claims) != nil || claims.ResourceAccess == nil {
		return nil, false
	}
	roles = append(roles, claims.ResourceAccess[client].Roles...)
	sort.Strings(roles)
	return roles, true
}
