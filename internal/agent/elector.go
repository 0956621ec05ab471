package agent

import (
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/leader"
)

// NewElector builds the elector when leader election is enabled (nil otherwise). It reads the
// kubeconfig or the service account files but makes no network call; errors name the key.
func NewElector(cfg *config.Config, a *Agent) (*leader.Elector, error) {
	le := cfg.LeaderElection
	if !le.Enabled {
		a.metrics.Leader.Set(1)
		return nil, nil
	}
	fail := func(key string, err error) error {
		return &config.Error{Path: cfg.Path, Key: "leader_election." + key, Problem: err.Error()}
	}
	ns, err := leader.Namespace(le.Namespace)
	if err != nil {
		return nil, fail("namespace", err)
	}
	rc, err := leader.RESTConfig(le.Kubeconfig, "site-agent/"+a.version)
	if err != nil {
		return nil, fail("kubeconfig", err)
	}
	id := le.Identity
	if id == "" {
		id = leader.DefaultIdentity()
	}
	metrics := a.metrics // process-wide: the same after a reload
	observe := func(event string) {
		metrics.LeaderChanges.WithLabelValues(event).Inc()
		if event == "acquired" {
			metrics.Leader.Set(1)
		} else {
			metrics.Leader.Set(0)
		}
	}
	el, err := leader.New(leader.Config{Namespace: ns, Name: le.LeaseName, Identity: id, LeaseDuration: le.LeaseDuration,
		RenewDeadline: le.RenewDeadline, RetryPeriod: le.RetryPeriod, REST: rc}, a.log, observe)
	if err != nil {
		return nil, fail("kubeconfig", err)
	}
	a.metrics.Leader.Set(0)
	return el, nil
}
