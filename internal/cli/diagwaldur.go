package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/agent"
	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/waldurclient"
)

// diagnoseWaldur checks the offering's side in Waldur, in order: reachable, credentials, the
// offering, permissions, components, the cluster name, open orders. It stops where the next
// check cannot work.
func diagnoseWaldur(ctx context.Context, cfg *config.Config, off config.Offering, log *zap.Logger) []backends.Check {
	var out []backends.Check
	line := func(ok bool, name, detail string) {
		out = append(out, backends.Check{Name: name, OK: ok, Detail: detail})
	}
	c, err := agent.ProbeClient(cfg, off, userAgent("diagnostics"), log)
	if err != nil {
		line(false, "waldur client", err.Error())
		return out
	}
	auth := "static token"
	if off.OIDC != nil {
		auth = "OIDC client credentials (" + off.OIDC.ClientID + ")"
	}
	v, err := c.Version(ctx)
	if err != nil {
		line(false, "waldur reachable", off.APIURL+": "+err.Error())
	} else {
		line(true, "waldur reachable", fmt.Sprintf("%s version %s", off.APIURL, v))
	}
	var answered *failure.StatusError
	if err != nil && !errors.As(err, &answered) {
		return out // no answer at all: the other checks would say the same
	}
	me, err := c.Me(ctx)
	if err != nil {
		line(false, "credentials", auth+": "+err.Error())
		return out
	}
	line(true, "credentials", fmt.Sprintf("%s: user %s (staff: %v)", auth, me.Username, me.IsStaff))
	o, err := c.GetOffering(ctx, off.UUID)
	if err != nil {
		line(false, "offering readable", err.Error()+" — is the user a manager of this offering's organisation?")
		return out
	}
	line(true, "offering readable", fmt.Sprintf("%q state %s, organisation %s", o.Name, o.State, o.CustomerName))
	line(hasPermission(me, o), "permissions", permissionText(me))
	out = append(out, checkComponents(off, o))
	if off.ClusterName != "" {
		line(o.BackendID == off.ClusterName, "cluster name", fmt.Sprintf("offering backend_id %q, backend_settings.cluster_name %q", o.BackendID, off.ClusterName))
	}
	orders, err := c.ListOrders(ctx, off.UUID, waldurclient.OrderPendingProvider, waldurclient.OrderExecuting)
	if err != nil {
		line(false, "open orders", err.Error())
	} else {
		line(true, "open orders", fmt.Sprintf("%d pending or executing", len(orders)))
	}
	return out
}

func hasPermission(me waldurclient.User, o waldurclient.Offering) bool {
	if me.IsStaff {
		return true
	}
	for _, p := range me.Permissions {
		if hexEq(p.ScopeUUID, o.CustomerUUID) || hexEq(p.ScopeUUID, o.UUID) {
			return true
		}
	}
	return false
}

func permissionText(me waldurclient.User) string {
	if me.IsStaff {
		return "staff user"
	}
	var parts []string
	for _, p := range me.Permissions {
		parts = append(parts, fmt.Sprintf("%s on %s %q", p.RoleName, p.ScopeType, p.ScopeName))
	}
	if len(parts) == 0 {
		return "no roles: grant the user a role on the offering's organisation"
	}
	return strings.Join(parts, "; ")
}

func checkComponents(off config.Offering, o waldurclient.Offering) backends.Check {
	have := map[string]bool{}
	for _, c := range o.Components {
		have[c.Type] = true
	}
	var missing []string
	for _, c := range off.Components {
		if !have[c.Name] {
			missing = append(missing, c.Name)
		}
	}
	if len(missing) > 0 {
		return backends.Check{Name: "components", Detail: fmt.Sprintf("configured but missing in Waldur: %s (run site-agent load-components)", strings.Join(missing, ", "))}
	}
	return backends.Check{Name: "components", OK: true, Detail: fmt.Sprintf("%d in Waldur, %d configured", len(o.Components), len(off.Components))}
}

func hexEq(a, b string) bool {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "-", "")) }
	return a != "" && norm(a) == norm(b)
}
