package keycloak

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"unicode/utf8"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/upstream"
	"go.uber.org/zap"
)

// MaxGroupName is the longest group name Keycloak stores (KEYCLOAK_GROUP.NAME varchar(255));
// a longer one fails inside Keycloak with a 500, so it is refused before any request.
const MaxGroupName = 255

// EnsureGroup finds or creates the top-level group parent, then the group child under it, and
// returns the child's id. Created groups carry managed_by=["waldur-site-agent"] and the
// description. A cached child id is returned without a request (a stale one shows up as a 404
// on the next member call, which drops it). An unknown child is created first and looked up only
// when Keycloak answers 409 (it exists, or a concurrent creator won): one request for a new
// group under a known parent, two for an existing one the cache does not know yet.
func (c *Client) EnsureGroup(ctx context.Context, parent, parentDesc, child, childDesc string) (string, error) {
	id, _, err := c.EnsureChildGroup(ctx, parent, parentDesc, child, childDesc)
	return id, err
}

// EnsureChildGroup is EnsureGroup that also reports whether this call created the child (so a
// caller knows the new group has no members without reading them).
func (c *Client) EnsureChildGroup(ctx context.Context, parent, parentDesc, child, childDesc string) (id string, created bool, err error) {
	if err := checkNames(parent, child); err != nil {
		return "", false, err
	}
	if id, ok := c.cache.child(parent, child); ok {
		return id, false, nil
	}
	defer c.lock(parent)()
	for attempt := 0; ; attempt++ {
		pid, err := c.ensureParent(ctx, parent, parentDesc)
		if err != nil {
			return "", false, err
		}
		cid, created, err := c.ensureChild(ctx, parent, pid, child, childDesc)
		if isNotFound(err) && attempt == 0 {
			upstream.Log(ctx, c.log).Debug("cached keycloak parent group is gone; looking it up again", zap.String("group", parent))
			c.cache.dropParent(parent)
			continue
		}
		return cid, created, err
	}
}

func (c *Client) ensureParent(ctx context.Context, name, desc string) (string, error) {
	if id, ok := c.cache.parent(name); ok {
		return id, nil
	}
	id, found, err := c.findTopLevel(ctx, name)
	if err == nil && !found {
		id, err = c.createTop(ctx, name, desc)
		if failure.HasStatus(err, http.StatusConflict) {
			upstream.Log(ctx, c.log).Debug("keycloak group was created concurrently; looking it up", zap.String("group", name))
			id, found, err = c.findTopLevel(ctx, name)
			if err == nil && !found {
				err = fmt.Errorf("%s create group %q: conflict, yet no top-level group has that name", service, name)
			}
		} else if err == nil {
			upstream.Log(ctx, c.log).Info("created keycloak group", zap.String("group", name), zap.String("id", id))
		}
	}
	if err != nil {
		return "", err
	}
	c.cache.setParent(name, id)
	return id, nil
}

// ensureChild creates child under parentID, or finds it when Keycloak says it exists (409). A
// 404 from the parent's URLs is returned as is: the caller drops the stale parent id and tries
// once more.
func (c *Client) ensureChild(ctx context.Context, parent, parentID, child, desc string) (string, bool, error) {
	if id, ok := c.cache.child(parent, child); ok { // created while this call waited for the lock
		return id, false, nil
	}
	id, err := c.createChild(ctx, parentID, child, desc)
	created := err == nil
	switch {
	case failure.HasStatus(err, http.StatusConflict):
		var found bool
		id, found, err = c.findChild(ctx, parentID, child)
		if err == nil && !found {
			err = fmt.Errorf("%s create group %q under %q: conflict, yet no child has that name", service, child, parent)
		}
	case err == nil:
		upstream.Log(ctx, c.log).Info("created keycloak group", zap.String("group", child), zap.String("parent", parent), zap.String("id", id))
	}
	if err != nil {
		return "", false, err
	}
	c.cache.setChild(parent, child, id)
	return id, created, nil
}

// FindChildGroup returns the id of child under the top-level group parent. It searches by
// exact name (never listing all groups) and caches ids: with a warm cache it sends no request;
// a cached id that Keycloak later answers 404 for is dropped by the call that saw the 404.
func (c *Client) FindChildGroup(ctx context.Context, parent, child string) (string, bool, error) {
	if err := checkNames(parent, child); err != nil {
		return "", false, err
	}
	if id, ok := c.cache.child(parent, child); ok {
		return id, true, nil
	}
	for attempt := 0; ; attempt++ {
		pid, found, err := c.parentID(ctx, parent)
		if err != nil || !found {
			return "", false, err
		}
		id, found, err := c.findChild(ctx, pid, child)
		if isNotFound(err) && attempt == 0 {
			c.cache.dropParent(parent)
			continue
		}
		if err != nil || !found {
			return "", false, err
		}
		c.cache.setChild(parent, child, id)
		return id, true, nil
	}
}

// parentID returns the cached or looked-up id of a top-level group.
func (c *Client) parentID(ctx context.Context, name string) (string, bool, error) {
	if id, ok := c.cache.parent(name); ok {
		return id, true, nil
	}
	id, found, err := c.findTopLevel(ctx, name)
	if err == nil && found {
		c.cache.setParent(name, id)
	}
	return id, found, err
}

// DeleteGroup deletes a group and, in Keycloak, its subgroups. A missing group is fine.
func (c *Client) DeleteGroup(ctx context.Context, groupID string) error {
	_, err := c.deleteGroup(ctx, groupID)
	return err
}

func (c *Client) deleteGroup(ctx context.Context, groupID string) (bool, error) {
	err := c.do(ctx, fmt.Sprintf("delete group %s", groupID), func(ctx context.Context, token string) error {
		return c.gc.DeleteGroup(ctx, token, c.realmSeg(), url.PathEscape(groupID))
	})
	if err == nil || isNotFound(err) {
		c.cache.dropID(groupID)
		return err == nil, nil
	}
	return false, err
}

// DeleteParentIfEmpty deletes the top-level group parent when it has neither subgroups nor
// direct members, and reports whether it did.
func (c *Client) DeleteParentIfEmpty(ctx context.Context, parent string) (bool, error) {
	if err := checkName(parent); err != nil {
		return false, err
	}
	defer c.lock(parent)()
	for attempt := 0; ; attempt++ {
		pid, found, err := c.parentID(ctx, parent)
		if err != nil || !found {
			return false, err
		}
		empty, err := c.isEmpty(ctx, pid)
		if isNotFound(err) && attempt == 0 {
			c.cache.dropParent(parent)
			continue
		}
		if err != nil || !empty {
			return false, err
		}
		deleted, err := c.deleteGroup(ctx, pid)
		c.cache.dropParent(parent)
		if deleted {
			upstream.Log(ctx, c.log).Info("deleted empty keycloak group", zap.String("group", parent), zap.String("id", pid))
		}
		return deleted, err
	}
}

func checkNames(parent, child string) error {
	if err := checkName(parent); err != nil {
		return err
	}
	return checkName(child)
}

func checkName(name string) error {
	if name == "" {
		return failure.Errorf("a keycloak group name is empty")
	}
	if n := utf8.RuneCountInString(name); n > MaxGroupName {
		return failure.Errorf("keycloak group name %q… is %d characters long; Keycloak allows at most %d",
			truncate(name, 40), n, MaxGroupName)
	}
	return nil
}

func truncate(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

func isNotFound(err error) bool { return failure.HasStatus(err, http.StatusNotFound) }

// notFound wraps a 404 so that errors.Is(err, failure.ErrNotFound) holds.
func notFound(err error) error {
	if err == nil || !isNotFound(err) {
		return err
	}
	return fmt.Errorf("%w: %w", failure.ErrNotFound, err)
}
