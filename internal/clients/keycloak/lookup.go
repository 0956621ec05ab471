package keycloak

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/Nerzal/gocloak/v13"
)

// pageSize is the page of every list request.
const pageSize = 100

// managedBy marks groups this agent created (the incumbent's attribute value).
const managedBy = "waldur-site-agent"

// childGroup is the part of a GroupRepresentation read from GET groups/{id}/children (gocloak
// v13 has no call for that endpoint).
type childGroup struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// findTopLevel finds the top-level group called name with GET groups?search=name&exact=true.
// Keycloak pages the matches anywhere in the tree and returns each inside its top-level
// ancestor, so a root called name is the answer, and counting the matching nodes tells whether
// another page can exist. Servers before 20.0 ignore exact and page substring matches, so every
// node whose name contains name (ignoring case) is counted: at worst one page too many is read
// from a newer server, never one too few from an older one.
func (c *Client) findTopLevel(ctx context.Context, name string) (string, bool, error) {
	exact, size := true, pageSize
	for first := 0; ; first += pageSize {
		var roots []*gocloak.Group
		err := c.do(ctx, fmt.Sprintf("look up group %q", name), func(ctx context.Context, token string) error {
			var err error
			roots, err = c.gc.GetGroups(ctx, token, c.realmSeg(), gocloak.GetGroupsParams{Search: &name, Exact: &exact, First: &first, Max: &size})
			return err
		})
		if err != nil {
			return "", false, err
		}
		matches := 0
		for _, g := range roots {
			if g != nil && g.Name != nil && *g.Name == name && g.ID != nil {
				return *g.ID, true, nil
			}
			matches += countNamed(g, name)
		}
		if matches < pageSize {
			return "", false, nil
		}
	}
}

func countNamed(g *gocloak.Group, name string) int {
	if g == nil {
		return 0
	}
	n := 0
	if g.Name != nil && strings.Contains(strings.ToLower(*g.Name), strings.ToLower(name)) {
		n++
	}
	if g.SubGroups != nil {
		for i := range *g.SubGroups {
			n += countNamed(&(*g.SubGroups)[i], name)
		}
	}
	return n
}

// findChild finds the child called name of parentID with GET groups/{id}/children?search=&
// exact=true. Keycloak compares exact searches there with SQL LIKE ('_' is a wildcard) and
// 24.0.0–24.0.3 ignored the search altogether, so names are compared here and pages are
// followed. Servers before 23.0 have no such endpoint: there the parent's representation, which
// carries its subgroups, is read instead (see compat.go). A 404 means the parent is gone.
func (c *Client) findChild(ctx context.Context, parentID, name string) (string, bool, error) {
	if c.inlineChildren.Load() {
		return c.findInlineChild(ctx, parentID, name)
	}
	for first := 0; ; first += pageSize {
		page, err := c.children(ctx, parentID, name, first, pageSize)
		if err != nil {
			if unsupportedChildren(err) || (isNotFound(err) && c.childrenMissing(ctx, parentID)) {
				c.useInlineChildren()
				return c.findInlineChild(ctx, parentID, name)
			}
			return "", false, err
		}
		for _, g := range page {
			if g.Name == name && g.ID != "" {
				return g.ID, true, nil
			}
		}
		if len(page) < pageSize {
			return "", false, nil
		}
	}
}

// children is one page of GET groups/{id}/children, sent with gocloak's resty client.
func (c *Client) children(ctx context.Context, parentID, search string, first, max int) ([]childGroup, error) {
	var page []childGroup
	q := map[string]string{"first": strconv.Itoa(first), "max": strconv.Itoa(max), "briefRepresentation": "true"}
	op := fmt.Sprintf("list children of group %s", parentID)
	if search != "" {
		q["search"], q["exact"] = search, "true"
		op = fmt.Sprintf("look up child group %q of group %s", search, parentID)
	}
	err := c.do(ctx, op, func(ctx context.Context, token string) error {
		_, err := c.gc.GetRequestWithBearerAuth(ctx, token).SetResult(&page).SetQueryParams(q).
			Get(c.adminURL("groups", parentID, "children"))
		return err
	})
	return page, err
}

// createTop creates a top-level group: POST groups answers 201 with the id in Location.
func (c *Client) createTop(ctx context.Context, name, desc string) (string, error) {
	var id string
	err := c.do(ctx, fmt.Sprintf("create group %q", name), func(ctx context.Context, token string) error {
		var err error
		id, err = c.gc.CreateGroup(ctx, token, c.realmSeg(), newGroup(name, desc))
		return err
	})
	return checkCreated(err, id, name)
}

// createChild creates a child group: POST groups/{id}/children answers 201 with Location.
func (c *Client) createChild(ctx context.Context, parentID, name, desc string) (string, error) {
	var id string
	err := c.do(ctx, fmt.Sprintf("create group %q under group %s", name, parentID), func(ctx context.Context, token string) error {
		var err error
		id, err = c.gc.CreateChildGroup(ctx, token, c.realmSeg(), url.PathEscape(parentID), newGroup(name, desc))
		return err
	})
	return checkCreated(err, id, name)
}

func checkCreated(err error, id, name string) (string, error) {
	if err != nil {
		return "", err
	}
	if id == "" {
		return "", fmt.Errorf("%s create group %q: the answer has no Location with the new id", service, name)
	}
	return id, nil
}

func newGroup(name, desc string) gocloak.Group {
	attrs := map[string][]string{"managed_by": {managedBy}}
	if desc != "" {
		attrs["description"] = []string{desc}
	}
	return gocloak.Group{Name: &name, Attributes: &attrs}
}

// isEmpty reports whether a group has neither children nor direct members.
func (c *Client) isEmpty(ctx context.Context, id string) (bool, error) {
	var kids int
	if c.inlineChildren.Load() {
		g, err := c.readGroup(ctx, id)
		if err != nil {
			return false, err
		}
		kids = len(subGroups(g))
	} else {
		page, err := c.children(ctx, id, "", 0, 1)
		if unsupportedChildren(err) {
			c.useInlineChildren()
			return c.isEmpty(ctx, id)
		}
		if err != nil {
			return false, err
		}
		kids = len(page)
	}
	if kids > 0 {
		return false, nil
	}
	members, err := c.memberPage(ctx, id, 0, 1)
	return err == nil && len(members) == 0, err
}

func (c *Client) realmSeg() string { return url.PathEscape(c.cfg.Realm) }
