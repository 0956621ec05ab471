package upstream

import "time"

// The upstreams whose timeouts and retries the configuration's `upstreams` section sets.
const (
	Waldur     = "waldur"
	Rancher    = "rancher"
	Kubernetes = "kubernetes"
	Keycloak   = "keycloak"
	OpenStack  = "openstack"
	Vault      = "vault"
)

// Names lists the upstreams in the order the documentation gives them.
var Names = []string{Waldur, Rancher, Kubernetes, Keycloak, OpenStack, Vault}

// Settings are one upstream's timeout and retry settings from the configuration. A zero field
// leaves the client's own default in place.
type Settings struct {
	Timeout    time.Duration // one attempt, reading the body included
	Retries    *int          // retries after the first attempt (0: none)
	BackoffMin time.Duration // first wait
	BackoffMax time.Duration // cap of the exponential wait
}

// RetryPolicy is the policy the settings ask for, to be completed with a client's defaults by
// RetryPolicy.Or (retries: 0 becomes "none", unset stays "default").
func (s Settings) RetryPolicy() RetryPolicy {
	p := RetryPolicy{WaitMin: s.BackoffMin, WaitMax: s.BackoffMax}
	if s.Retries != nil {
		p.Max = *s.Retries
		if p.Max == 0 {
			p.Max = -1
		}
	}
	return p
}

// TimeoutOr returns the configured timeout, or def when there is none.
func (s Settings) TimeoutOr(def time.Duration) time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return def
}

// RetriesOr returns the configured number of retries, or def when there is none.
func (s Settings) RetriesOr(def int) int {
	if s.Retries != nil {
		return *s.Retries
	}
	return def
}

// Upstreams are the settings by upstream name; a missing name means "all defaults".
type Upstreams map[string]Settings

// Get returns the settings of one upstream (zero when the configuration has none).
func (u Upstreams) Get(name string) Settings { return u[name] }
