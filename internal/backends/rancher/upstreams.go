package rancher

import (
	"time"

	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
	"github.com/waldur/site-agent/internal/upstream"
)

// The Rancher objects the backend reads and writes, as the shared client returns them.
type (
	Project = rancherapi.Project
	Binding = rancherapi.Binding
	Cluster = rancherapi.Cluster
)

// timeoutFor bounds one attempt to an upstream of the backend (rancher, kubernetes, keycloak):
// backend_settings.timeout when the offering sets it, else the upstreams section, else 30s.
func (c *config) timeoutFor(name string) time.Duration {
	if c.timeoutSet {
		return c.timeout
	}
	return c.up.Get(name).TimeoutOr(c.timeout)
}

// settingsFor is the upstreams section's entry for name with the timeout the offering asks for;
// the clients fill what it leaves unset with their defaults.
func (c *config) settingsFor(name string) upstream.Settings {
	s := c.up.Get(name)
	s.Timeout = c.timeoutFor(name)
	return s
}
