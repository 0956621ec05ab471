package keycloak

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/Nerzal/gocloak/v13"
	"github.com/waldur/site-agent/internal/failure"
)

// FindUser looks a user up. With byID it reads users/{ident} and, on a 404, falls back to an
// exact username search (Waldur usernames may or may not be Keycloak ids); otherwise it searches
// by exact username. Keycloak stores usernames in lower case, so the comparison ignores case.
func (c *Client) FindUser(ctx context.Context, ident string, byID bool) (User, bool, error) {
	if strings.TrimSpace(ident) == "" {
		return User{}, false, failure.Errorf("a keycloak user identifier is empty")
	}
	if byID {
		var u *gocloak.User
		err := c.do(ctx, fmt.Sprintf("read user %q", ident), func(ctx context.Context, token string) error {
			var err error
			u, err = c.gc.GetUserByID(ctx, token, c.realmSeg(), url.PathEscape(ident))
			return err
		})
		if err == nil && u != nil && u.ID != nil {
			return User{ID: *u.ID, Username: deref(u.Username)}, true, nil
		}
		if err != nil && !isNotFound(err) {
			return User{}, false, err
		}
	}
	return c.findUsername(ctx, ident)
}

// findUsername pages GET users?username=&exact=true and keeps the exact match only (servers
// that ignore exact answer a substring search).
func (c *Client) findUsername(ctx context.Context, username string) (User, bool, error) {
	exact, size := true, pageSize
	for first := 0; ; first += pageSize {
		var page []*gocloak.User
		err := c.do(ctx, fmt.Sprintf("look up user %q", username), func(ctx context.Context, token string) error {
			var err error
			page, err = c.gc.GetUsers(ctx, token, c.realmSeg(), gocloak.GetUsersParams{Username: &username, Exact: &exact, First: &first, Max: &size})
			return err
		})
		if err != nil {
			return User{}, false, err
		}
		for _, u := range page {
			if u != nil && u.ID != nil && strings.EqualFold(deref(u.Username), username) {
				return User{ID: *u.ID, Username: deref(u.Username)}, true, nil
			}
		}
		if len(page) < pageSize {
			return User{}, false, nil
		}
	}
}

// Members returns every direct member of a group, following pages of 100. A missing group is
// an error that matches failure.ErrNotFound, and its cached id is dropped.
func (c *Client) Members(ctx context.Context, groupID string) ([]User, error) {
	var out []User
	for first := 0; ; first += pageSize {
		page, err := c.memberPage(ctx, groupID, first, pageSize)
		if err != nil {
			if isNotFound(err) {
				c.cache.dropID(groupID)
			}
			return nil, notFound(err)
		}
		for _, u := range page {
			if u != nil && u.ID != nil {
				out = append(out, User{ID: *u.ID, Username: deref(u.Username)})
			}
		}
		if len(page) < pageSize {
			return out, nil
		}
	}
}

func (c *Client) memberPage(ctx context.Context, groupID string, first, size int) ([]*gocloak.User, error) {
	brief := true
	var page []*gocloak.User
	err := c.do(ctx, fmt.Sprintf("list members of group %s", groupID), func(ctx context.Context, token string) error {
		var err error
		page, err = c.gc.GetGroupMembers(ctx, token, c.realmSeg(), url.PathEscape(groupID),
			gocloak.GetGroupsParams{First: &first, Max: &size, BriefRepresentation: &brief})
		return err
	})
	return page, err
}

// AddMember puts a user into a group; Keycloak treats a repeated add as a no-op. A missing
// user or group is an error that matches failure.ErrNotFound.
func (c *Client) AddMember(ctx context.Context, userID, groupID string) error {
	err := c.do(ctx, fmt.Sprintf("add user %s to group %s", userID, groupID), func(ctx context.Context, token string) error {
		return c.gc.AddUserToGroup(ctx, token, c.realmSeg(), url.PathEscape(userID), url.PathEscape(groupID))
	})
	c.forgetMissingGroup(err, groupID)
	return notFound(err)
}

// RemoveMember takes a user out of a group. A user who is not a member, or a missing user or
// group, is fine.
func (c *Client) RemoveMember(ctx context.Context, userID, groupID string) error {
	err := c.do(ctx, fmt.Sprintf("remove user %s from group %s", userID, groupID), func(ctx context.Context, token string) error {
		return c.gc.DeleteUserFromGroup(ctx, token, c.realmSeg(), url.PathEscape(userID), url.PathEscape(groupID))
	})
	c.forgetMissingGroup(err, groupID)
	if isNotFound(err) {
		return nil
	}
	return err
}

// forgetMissingGroup drops a cached id when Keycloak says the group does not exist (its
// membership routes answer "Group not found"; a missing user is "User not found").
func (c *Client) forgetMissingGroup(err error, groupID string) {
	var se *failure.StatusError
	if isNotFound(err) && errors.As(err, &se) && strings.Contains(se.Body, "Group not found") {
		c.cache.dropID(groupID)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
