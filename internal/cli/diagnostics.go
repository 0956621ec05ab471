package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/agent"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/modes"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/waldurclient"
)

// report prints diagnostics lines and counts problems.
type report struct {
	w        io.Writer
	problems int
}

func (r *report) line(ok bool, name, detail string) {
	mark := "ok  "
	if !ok {
		mark = "FAIL"
		r.problems++
	}
	fmt.Fprintf(r.w, "  [%s] %-22s %s\n", mark, name, secret.Scrub(detail))
}

func diagnosticsCmd(ctx context.Context, args []string, io IO) int {
	return command(ctx, spec{name: "diagnostics"}, args, io, func(ctx context.Context, inv *invocation) error {
		cfg := inv.cfg
		r := &report{w: io.Stdout}
		fmt.Fprintf(io.Stdout, "site-agent %s diagnostics for %s\n", Version, cfg.Path)
		for _, w := range inv.warnings {
			fmt.Fprintln(io.Stdout, "  warning:", w)
		}
		for _, off := range cfg.Offerings {
			fmt.Fprintf(io.Stdout, "\n%s, uuid %s\n", off.Label(), off.UUID)
			cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			diagnoseWaldur(cctx, r, cfg, off, inv.log)
			diagnoseBackends(cctx, r, off, inv.log)
			cancel()
		}
		if r.problems > 0 {
			fmt.Fprintf(io.Stdout, "\n%d problem(s) found\n", r.problems)
			return errReported
		}
		fmt.Fprintln(io.Stdout, "\nall checks passed")
		return nil
	})
}

func diagnoseWaldur(ctx context.Context, r *report, cfg *config.Config, off config.Offering, log *zap.Logger) {
	c, err := agent.ProbeClient(cfg, off, userAgent("diagnostics"), log)
	if err != nil {
		r.line(false, "waldur client", err.Error())
		return
	}
	auth := "static token"
	if off.OIDC != nil {
		auth = "OIDC client credentials (" + off.OIDC.ClientID + ")"
	}
	v, err := c.Version(ctx)
	r.line(err == nil, "waldur reachable", fmt.Sprintf("%s version %s %s", off.APIURL, v, errText(err)))
	me, err := c.Me(ctx)
	if err != nil {
		r.line(false, "credentials", auth+": "+err.Error())
		return
	}
	r.line(true, "credentials", fmt.Sprintf("%s: user %s (staff: %v)", auth, me.Username, me.IsStaff))
	o, err := c.GetOffering(ctx, off.UUID)
	if err != nil {
		r.line(false, "offering readable", err.Error()+" — is the user a manager of this offering's organisation?")
		return
	}
	r.line(true, "offering readable", fmt.Sprintf("%q state %s, organisation %s", o.Name, o.State, o.CustomerName))
	r.line(hasPermission(me, o), "permissions", permissionText(me))
	checkComponents(r, off, o)
	if off.ClusterName != "" {
		r.line(o.BackendID == off.ClusterName, "cluster name", fmt.Sprintf("offering backend_id %q, backend_settings.cluster_name %q", o.BackendID, off.ClusterName))
	}
	orders, err := c.ListOrders(ctx, off.UUID, waldurclient.OrderPendingProvider, waldurclient.OrderExecuting)
	r.line(err == nil, "open orders", fmt.Sprintf("%d pending or executing %s", len(orders), errText(err)))
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

func checkComponents(r *report, off config.Offering, o waldurclient.Offering) {
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
		r.line(false, "components", fmt.Sprintf("configured but missing in Waldur: %s (run site-agent load-components)", strings.Join(missing, ", ")))
		return
	}
	r.line(true, "components", fmt.Sprintf("%d in Waldur, %d configured", len(o.Components), len(off.Components)))
}

func diagnoseBackends(ctx context.Context, r *report, off config.Offering, log *zap.Logger) {
	reg := agent.Backends()
	seen := map[string]bool{}
	for _, spec := range modes.Specs() {
		key, name := spec.BackendKey(off)
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		if !reg.Has(name) {
			r.line(false, "backend "+name, fmt.Sprintf("%s: unknown backend (available: %v)", key, reg.Names()))
			continue
		}
		set, err := agent.ProbeBackend(reg, off, name, log)
		if err != nil {
			r.line(false, "backend "+name, err.Error())
			continue
		}
		if set.Pinger != nil {
			err := set.Pinger.Ping(ctx)
			r.line(err == nil, "backend "+name, "ping "+okText(err))
		}
		if set.Diagnoser != nil {
			for _, c := range set.Diagnoser.Diagnose(ctx) {
				r.line(c.OK, c.Name, c.Detail)
			}
		}
		if set.Closer != nil {
			_ = set.Closer.Close()
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return "— " + err.Error()
}

func okText(err error) string {
	if err == nil {
		return "ok"
	}
	return "failed: " + err.Error()
}

func hexEq(a, b string) bool {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "-", "")) }
	return a != "" && norm(a) == norm(b)
}
