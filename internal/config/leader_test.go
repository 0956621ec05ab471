package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func parseLeader(t *testing.T, section string, over map[string]any) (*Config, []string, error) {
	t.Helper()
	text := strings.Replace(minimal, "%s", "https://waldur.example.com/api/", 1) + section
	return Parse("t.yaml", []byte(text), Options{Environ: func() []string { return nil }, Overrides: over})
}

func TestLeaderElectionDefaultsAndKeys(t *testing.T) {
	cfg, _, err := parseLeader(t, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	le := cfg.LeaderElection
	if le.Enabled || le.LeaseName != "site-agent" || le.LeaseDuration != 15*time.Second || le.RenewDeadline != 10*time.Second || le.RetryPeriod != 2*time.Second {
		t.Fatalf("defaults: %+v", le)
	}
	cfg, warnings, err := parseLeader(t, `leader_election:
  enabled: true
  namespace: waldur
  lease_name: agent.hpc
  kubeconfig: /etc/kube.conf
  lease_duration: 30
  renew_deadline: 20s
  retry_period: 4s
  lease_duraton: 1s
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	le = cfg.LeaderElection
	if !le.Enabled || le.Namespace != "waldur" || le.LeaseName != "agent.hpc" || le.Kubeconfig != "/etc/kube.conf" ||
		le.LeaseDuration != 30*time.Second || le.RenewDeadline != 20*time.Second || le.RetryPeriod != 4*time.Second {
		t.Fatalf("keys: %+v", le)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "leader_election.lease_duraton") {
		t.Fatalf("warnings %v, want one naming the misspelt key", warnings)
	}
}

func TestLeaderElectionFlagsOverrideFile(t *testing.T) {
	cfg, _, err := parseLeader(t, "leader_election: {enabled: false, namespace: a}\n",
		map[string]any{"leader_election": map[string]any{"enabled": true, "lease_duration": "20s"}})
	if err != nil {
		t.Fatal(err)
	}
	if le := cfg.LeaderElection; !le.Enabled || le.Namespace != "a" || le.LeaseDuration != 20*time.Second {
		t.Fatalf("%+v", le)
	}
}

func TestLeaderElectionInvalid(t *testing.T) {
	cases := []struct{ section, key string }{
		{"leader_election: {lease_duration: 10s}", "leader_election.lease_duration"}, // not > 10s + 2s
		{"leader_election: {renew_deadline: 2s, retry_period: 2s, lease_duration: 15s}", "leader_election.renew_deadline"},
		{"leader_election: {retry_period: -1s}", "leader_election.retry_period"},
		{"leader_election: {lease_name: Site_Agent}", "leader_election.lease_name"},
		{"leader_election: {namespace: a.b}", "leader_election.namespace"},
		{"leader_election: {enabled: sometimes}", "leader_election.enabled"},
		{"leader_election: yes", "leader_election"},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			_, _, err := parseLeader(t, c.section+"\n", nil)
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != c.key {
				t.Fatalf("error %v, want one naming %s", err, c.key)
			}
		})
	}
}
