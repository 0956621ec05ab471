package rke2

import (
	"fmt"
	"time"
)

// Timeouts bound how long a node may take before the agent acts on it (backend_settings
// drain_timeout and node_registration_timeout, Go durations such as "15m").
type Timeouts struct {
	// DrainTimeout: a node being removed that has not drained by then fails the order with
	// a reason naming it (its pods cannot be evicted: a PodDisruptionBudget, local data).
	DrainTimeout time.Duration `mapstructure:"drain_timeout"`
	// RegistrationTimeout: a VM that has been up this long without its node appearing in
	// Rancher (its bootstrap failed: Vault or Rancher unreachable from the VM, an expired
	// secret id) is deleted and made again with fresh credentials.
	RegistrationTimeout time.Duration `mapstructure:"node_registration_timeout"`
}

const (
	defaultDrainTimeout        = 15 * time.Minute
	defaultRegistrationTimeout = 30 * time.Minute
)

func (t *Timeouts) applyDefaults() {
	if t.DrainTimeout == 0 {
		t.DrainTimeout = defaultDrainTimeout
	}
	if t.RegistrationTimeout == 0 {
		t.RegistrationTimeout = defaultRegistrationTimeout
	}
}

func (t *Timeouts) validate() error {
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"drain_timeout", t.DrainTimeout}, {"node_registration_timeout", t.RegistrationTimeout}} {
		if d.v < time.Minute || d.v > 24*time.Hour {
			return fmt.Errorf("backend_settings.%s: want a duration between 1m and 24h, got %s", d.key, d.v)
		}
	}
	return nil
}
