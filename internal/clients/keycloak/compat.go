package keycloak

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/Nerzal/gocloak/v13"

	"github.com/waldur/site-agent/internal/failure"
)

// Keycloak versions the client supports, and the admin API differences it bridges (from the
// Keycloak upgrade notes and pull requests):
//
//   - 23.0 added GET groups/{id}/children and stopped putting subgroups into group
//     representations. Older servers answer that GET with 405 (only POST serves the path): the
//     client then reads the parent group, whose subGroups lists its children, and remembers to
//     do so for the rest of the process.
//   - 20.0 added exact=true to GET groups (keycloak/keycloak#13974); older servers answer a
//     substring search, which findTopLevel pages through.
//   - 24.0.0–24.0.3 ignored search on the children endpoint (#28818, fixed by #29011); names are
//     always compared here.
const (
	MinSupportedMajor = 18 // RH-SSO 7.6 is Keycloak 18; older servers are untested
	MaxTestedMajor    = 26
	childrenSince     = 23
)

// useInlineChildren switches child lookups to the parent's subGroups (servers before 23.0).
func (c *Client) useInlineChildren() {
	if !c.inlineChildren.Swap(true) {
		c.log.Info("keycloak has no GET groups/{id}/children (before 23.0); child groups are read from their parent")
	}
}

// unsupportedChildren reports the answer of a server without GET groups/{id}/children.
func unsupportedChildren(err error) bool {
	return failure.HasStatus(err, http.StatusMethodNotAllowed)
}

// childrenMissing tells, after a 404 from GET groups/{id}/children, whether the parent exists
// (so the endpoint is what is missing, as behind some proxies) rather than the parent.
func (c *Client) childrenMissing(ctx context.Context, parentID string) bool {
	_, err := c.readGroup(ctx, parentID)
	return err == nil
}

// findInlineChild finds the child called name among the subGroups of parentID's representation.
func (c *Client) findInlineChild(ctx context.Context, parentID, name string) (string, bool, error) {
	g, err := c.readGroup(ctx, parentID)
	if err != nil {
		return "", false, err
	}
	for _, k := range subGroups(g) {
		if k.Name != nil && *k.Name == name && k.ID != nil {
			return *k.ID, true, nil
		}
	}
	return "", false, nil
}

// readGroup is GET groups/{id}.
func (c *Client) readGroup(ctx context.Context, id string) (*gocloak.Group, error) {
	var g *gocloak.Group
	err := c.do(ctx, fmt.Sprintf("read group %s", id), func(ctx context.Context, token string) error {
		var err error
		g, err = c.gc.GetGroup(ctx, token, c.realmSeg(), url.PathEscape(id))
		return err
	})
	if err == nil && g == nil {
		err = fmt.Errorf("%s read group %s: empty answer", service, id)
	}
	return g, err
}

func subGroups(g *gocloak.Group) []gocloak.Group {
	if g == nil || g.SubGroups == nil {
		return nil
	}
	return *g.SubGroups
}

// ServerVersion returns Keycloak's version from GET admin/serverinfo ("" when the answer does
// not carry it). Any administrator of some realm may read it.
func (c *Client) ServerVersion(ctx context.Context) (string, error) {
	var info *gocloak.ServerInfoRepresentation
	err := c.do(ctx, "read server info", func(ctx context.Context, token string) error {
		var err error
		info, err = c.gc.GetServerInfo(ctx, token)
		return err
	})
	if err != nil || info == nil || info.SystemInfo == nil || info.SystemInfo.Version == nil {
		return "", err
	}
	return *info.SystemInfo.Version, nil
}

// VersionNote judges a version string: whether it is in the supported range and how child
// groups are looked up on it.
func VersionNote(version string) (note string, supported bool) {
	major, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(version, "v"), ".", 2)[0])
	if err != nil {
		return fmt.Sprintf("version %q not understood; supported: Keycloak %d–%d", version, MinSupportedMajor, MaxTestedMajor), true
	}
	lookup := "child groups looked up with groups/{id}/children"
	if major < childrenSince {
		lookup = "no groups/{id}/children before 23: child groups read from their parent"
	}
	switch {
	case major < MinSupportedMajor:
		return fmt.Sprintf("Keycloak %s is older than the supported %d–%d; %s", version, MinSupportedMajor, MaxTestedMajor, lookup), false
	case major > MaxTestedMajor:
		return fmt.Sprintf("Keycloak %s (newer than the tested %d–%d); %s", version, MinSupportedMajor, MaxTestedMajor, lookup), true
	}
	return fmt.Sprintf("Keycloak %s (supported %d–%d); %s", version, MinSupportedMajor, MaxTestedMajor, lookup), true
}
