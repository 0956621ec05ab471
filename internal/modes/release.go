package modes

import (
	"context"
	"fmt"
	"sync"

	"go.uber.org/zap"

	wc "github.com/waldur/site-agent/internal/waldurclient"
)

// releaseGate remembers, per offering, the Waldur version once it was found new enough for the
// resource-project API; while it is not, every pass reads the version again (an upgrade is
// noticed without a restart).
type releaseGate struct {
	mu      sync.Mutex
	version string // set when accepted
	warned  map[string]bool
}

// requireResourceProjects refuses, with one message naming both versions, a Waldur older than
// the first release serving the resource-project API, before the pass does anything else: the
// alternative is a 404 for every call of every resource. A version that is not a release
// number (a development build) is let through with a warning. It returns the version.
func requireResourceProjects(ctx context.Context, u *Unit) (string, error) {
	g := &u.release
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.version != "" {
		return g.version, nil
	}
	v, err := u.Waldur.Version(ctx)
	if err != nil {
		return "", fmt.Errorf("read Waldur's version (the %s backend needs at least %s): %w", u.Backend.Name, wc.ResourceProjectsSince, err)
	}
	atLeast, known := wc.VersionAtLeast(v, wc.ResourceProjectsSince)
	switch {
	case !known:
		g.warnOnce(u, "version:"+v, "Waldur reports a version that is not a release number; assuming it serves the resource-project API",
			zap.String("waldur_version", v), zap.String("needed", wc.ResourceProjectsSince))
	case !atLeast:
		return "", fmt.Errorf("Waldur %s is too old for membership_sync_backend %q: it needs Waldur %s or later "+
			"(the resource-project API, /api/marketplace-provider-resource-projects/); upgrade Waldur", v, u.Backend.Name, wc.ResourceProjectsSince)
	}
	g.version = v
	return v, nil
}

// warnOnce logs a warning the first time key is seen for the unit. The caller holds g.mu.
func (g *releaseGate) warnOnce(u *Unit, key, msg string, fields ...zap.Field) {
	if g.warned == nil {
		g.warned = map[string]bool{}
	}
	if !g.warned[key] {
		g.warned[key] = true
		u.Log.Warn(msg, fields...)
	}
}

// statusReporting decides whether this pass reports membership sync statuses: the offering
// opted in (plugin option enable_membership_sync_status) and Waldur serves the call.
func statusReporting(ctx context.Context, u *Unit, version string) bool {
	off, err := u.Waldur.GetOffering(ctx, u.Offering.UUID, "plugin_options")
	if err != nil {
		u.Log.Warn("could not read the offering's plugin options; membership sync statuses not reported this pass", zap.Error(err))
		return false
	}
	if off.PluginOptions["enable_membership_sync_status"] != true {
		return false
	}
	if atLeast, known := wc.VersionAtLeast(version, wc.MembershipSyncStatusesSince); known && !atLeast {
		u.release.mu.Lock()
		u.release.warnOnce(u, "statuses", "the offering enables membership sync statuses but Waldur does not serve them; not reported",
			zap.String("waldur_version", version), zap.String("needed", wc.MembershipSyncStatusesSince))
		u.release.mu.Unlock()
		return false
	}
	return true
}
