package keycloak

import (
	"context"
	"fmt"
)

// Line is one diagnostics line (the shape of backends.Check, which a backend converts it to;
// a client does not import the backends).
type Line struct {
	Name   string
	OK     bool
	Detail string
}

// Diagnose gives the Keycloak lines every backend with Keycloak access shows: the realm (and
// what waits while it fails), the server version against the supported range, and the rights
// to create groups and manage members.
func (c *Client) Diagnose(ctx context.Context) []Line {
	if err := c.Ping(ctx); err != nil {
		return []Line{{Name: "keycloak realm", Detail: err.Error() +
			" — while Keycloak does not answer, group and member changes wait; the rest of each order goes on"}}
	}
	out := []Line{{Name: "keycloak realm", OK: true, Detail: fmt.Sprintf("realm %s reachable", c.cfg.Realm)}}
	version, err := c.ServerVersion(ctx)
	switch {
	case err != nil:
		out = append(out, Line{Name: "keycloak server", OK: true, Detail: "version not readable (" + err.Error() + ")"})
	case version == "":
		out = append(out, Line{Name: "keycloak server", OK: true, Detail: "version not disclosed to this account"})
	default:
		note, ok := VersionNote(version)
		out = append(out, Line{Name: "keycloak server", OK: ok, Detail: note})
	}
	detail, err := c.CheckRights(ctx)
	if err != nil {
		detail = err.Error()
	}
	return append(out, Line{Name: "keycloak rights", OK: err == nil, Detail: detail})
}
