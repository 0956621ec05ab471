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
// ancestor, so a root called name is the answer, and counting the nodes called name tells
// whether another page can exist.
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
	if g.Name != nil && *g.Name == name {
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
// 24.0.x ignored the search altogether, so names are compared here and pages are followed.
// A 404 means the parent is gone.
func (c *Client) findChild(ctx context.Context, parentID, name string) (string, bool, error) {
	for first := 0; ; first += pageSize {
		page, err := c.children(ctx, parentID, name, first, pageSize)
		if err != nil {
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

// verifyChild checks that a cached child id still names parent/child (a rename or a re-created
// group changes the path). A 404 is "no".
func (c *Client) verifyChild(ctx context.Context, id, parent, child string) (bool, error) {
	var g *gocloak.Group
	err := c.do(ctx, fmt.Sprintf("read group %s", id), func(ctx context.Context, token string) error {
		var err error
		g, err = c.gc.GetGroup(ctx, token, c.realmSeg(), url.PathEscape(id))
		return err
	})
	if isNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return g != nil && g.Path != nil && *g.Path == groupPath(parent, child), nil
}

// groupPath is Keycloak's path of parent/child ("/" inside a name is escaped as "~/").
func groupPath(names ...string) string {
	var b strings.Builder
	for _, n := range names {
		b.WriteString("/" + strings.ReplaceAll(n, "/", "~/"))
	}
	return b.String()
}

// isEmpty reports whether a group has neither children nor direct members.
func (c *Client) isEmpty(ctx context.Context, id string) (bool, error) {
	kids, err := c.children(ctx, id, "", 0, 1)
	if err != nil || len(kids) > 0 {
		return false, err
	}
	members, err := c.memberPage(ctx, id, 0, 1)
	return err == nil && len(members) == 0, err
}

func (c *Client) realmSeg() string { return url.PathEscape(c.cfg.Realm) }
