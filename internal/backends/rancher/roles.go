package rancher

import "github.com/waldur/site-agent/internal/backends"

// The roles the rancher backend serves: Backend without Keycloak, WithKeycloak adds
// membership. The build fails when a method drifts from its role interface, instead of the
// role silently disappearing from backends.RolesOf.
var (
	_ backends.Provisioner      = (*Backend)(nil)
	_ backends.UsageReporter    = (*Backend)(nil)
	_ backends.GaugeUsage       = (*Backend)(nil)
	_ backends.Pinger           = (*Backend)(nil)
	_ backends.Diagnoser        = (*Backend)(nil)
	_ backends.Reconciler       = (*Backend)(nil)
	_ backends.StatusController = (*Backend)(nil)
	_ backends.LimitsReader     = (*Backend)(nil)
	_ backends.MetadataReader   = (*Backend)(nil)
	_ backends.OrderEvaluator   = (*Backend)(nil)
	_ backends.Closer           = (*Backend)(nil)

	_ backends.MembershipManager = (*WithKeycloak)(nil)
)
