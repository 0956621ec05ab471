package openstack

import (
	"github.com/waldur/site-agent/internal/backends"
	osc "github.com/waldur/site-agent/internal/clients/openstack"
	"github.com/waldur/site-agent/internal/upstream"
)

// The HTTP client, its retry rules and the upstream defaults are shared with the rke2
// backend (internal/clients/openstack); these names keep this package's code short.
type httpOptions = osc.HTTPOptions

var (
	newHTTPClient = osc.NewHTTPClient
	classify      = osc.Classify
	isNotFound    = osc.IsNotFound
)

// withUpstream applies the configuration's upstreams.openstack section where the offering's
// backend_settings (request_timeout, retries) and the options (backoff) leave a value unset.
func withUpstream(o httpOptions, p backends.Params) httpOptions {
	_, timeout := p.Settings["request_timeout"]
	_, retries := p.Settings["retries"]
	return osc.WithUpstream(o, p.Upstreams.Get(upstream.OpenStack), osc.Pinned{Timeout: timeout, Retries: retries})
}
