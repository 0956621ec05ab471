package openstack

import (
	osc "github.com/waldur/site-agent/internal/clients/openstack"
)

// The HTTP client, its retry rules and the upstream defaults are shared with the rke2
// backend (internal/clients/openstack); these names keep this package's code short.
type httpOptions = osc.HTTPOptions

var (
	withUpstream  = osc.WithUpstream
	newHTTPClient = osc.NewHTTPClient
	classify      = osc.Classify
	isNotFound    = osc.IsNotFound
)
