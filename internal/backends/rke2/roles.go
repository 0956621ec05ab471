package rke2

import "github.com/waldur/site-agent/internal/backends"

// The roles the backend claims, checked at compile time.
var (
	_ backends.Provisioner    = (*Backend)(nil)
	_ backends.UsageReporter  = (*Backend)(nil)
	_ backends.GaugeUsage     = (*Backend)(nil)
	_ backends.Pinger         = (*Backend)(nil)
	_ backends.Diagnoser      = (*Backend)(nil)
	_ backends.OrderEvaluator = (*Backend)(nil)
	_ backends.Reconciler     = (*Backend)(nil)
	_ backends.MetadataReader = (*Backend)(nil)
)
