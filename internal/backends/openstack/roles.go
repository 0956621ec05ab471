package openstack

import "github.com/waldur/site-agent/internal/backends"

// The roles the openstack backend serves. The build fails when a method drifts from its role
// interface, instead of the role silently disappearing from backends.RolesOf.
var (
	_ backends.Provisioner       = (*Backend)(nil)
	_ backends.MembershipManager = (*Backend)(nil)
	_ backends.UsageReporter     = (*Backend)(nil)
	_ backends.GaugeUsage        = (*Backend)(nil)
	_ backends.Pinger            = (*Backend)(nil)
	_ backends.Diagnoser         = (*Backend)(nil)
	_ backends.StatusController  = (*Backend)(nil)
	_ backends.MetadataReader    = (*Backend)(nil)
	_ backends.Closer            = (*Backend)(nil)
)
