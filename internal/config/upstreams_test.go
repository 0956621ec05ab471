package config

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/upstream"
)

func TestUpstreamsSection(t *testing.T) {
	y := `upstreams:
  waldur: {timeout: 20s, retries: 2, backoff_min: 100ms, backoff_max: 3s}
  rancher: {retries: 0}
  keycloak: {timeout: 5}
  vault: {timeout: 7s, retries: 1, backoff_max: 4s}
` + strings.Replace(minimal, "%s", "https://w.example/api/", 1)
	environ := func() []string {
		return []string{"SITE_AGENT_UPSTREAMS_WALDUR_TIMEOUT=45s", "SITE_AGENT_UPSTREAMS_OPENSTACK_BACKOFF_MAX=9s",
			"SITE_AGENT_UPSTREAMS_NOPE_TIMEOUT=1s", "SITE_AGENT_UPSTREAMS_RANCHER_TIMEOUTS=1s"}
	}
	cfg, warnings, err := Parse("agent.yaml", []byte(y), Options{Environ: environ})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings %v", warnings)
	}
	w := cfg.Upstreams.Get(upstream.Waldur)
	if w.Timeout != 45*time.Second || w.Retries == nil || *w.Retries != 2 || w.BackoffMin != 100*time.Millisecond || w.BackoffMax != 3*time.Second {
		t.Errorf("waldur = %+v (the environment's timeout wins over the file)", w)
	}
	if got := w.RetryPolicy(); got != (upstream.RetryPolicy{Max: 2, WaitMin: 100 * time.Millisecond, WaitMax: 3 * time.Second}) {
		t.Errorf("waldur policy = %+v", got)
	}
	if r := cfg.Upstreams.Get(upstream.Rancher); r.Retries == nil || *r.Retries != 0 || r.RetryPolicy().Or(upstream.RetryPolicy{Max: 6}).Max != 0 {
		t.Errorf("rancher retries: 0 must mean none, got %+v", r)
	}
	if k := cfg.Upstreams.Get(upstream.Keycloak); k.Timeout != 5*time.Second || k.Retries != nil {
		t.Errorf("keycloak = %+v (a number is seconds)", k)
	}
	if o := cfg.Upstreams.Get(upstream.OpenStack); o.BackoffMax != 9*time.Second {
		t.Errorf("openstack from the environment = %+v", o)
	}
	if k := cfg.Upstreams.Get(upstream.Kubernetes); k != (upstream.Settings{}) {
		t.Errorf("kubernetes has no settings, got %+v", k)
	}
	if cfg.Vault != nil {
		t.Errorf("no vault section, yet got %v", cfg.Vault)
	}
}

func TestUpstreamsFillTheVaultSection(t *testing.T) {
	y := `vault:
  address: https://vault.example:8200
  max_retries: 5
  auth: {method: token, token: t}
upstreams:
  vault: {timeout: 7s, retries: 1, backoff_min: 10ms}
offerings:
  - name: A
    waldur_api_url: https://w.example/api/
    waldur_api_token: "vault:secret/agent#token"
    waldur_offering_uuid: e2ef0000-0000-0000-0000-000000000001
    backend_type: inmemory
    order_processing_backend: inmemory
`
	var seen map[string]any
	newResolver := func(section map[string]any) (Resolver, error) {
		seen = section
		return fixedResolver{}, nil
	}
	cfg, _, err := Parse("agent.yaml", []byte(y), Options{Environ: noEnv, Resolver: newResolver})
	if err != nil {
		t.Fatal(err)
	}
	for _, section := range []map[string]any{seen, cfg.Vault} {
		if section["timeout"] != "7s" || section["max_retries"] != 5 || section["backoff_min"] != "10ms" || section["backoff_max"] != nil {
			t.Errorf("vault section %v: want upstreams.vault filled in where the section is silent, its own max_retries kept", section)
		}
	}
}

type fixedResolver struct{}

func (fixedResolver) Resolve(context.Context, string) (string, error) { return "resolved-token", nil }

func TestUpstreamsInvalidNamesTheKey(t *testing.T) {
	base := strings.Replace(minimal, "%s", "https://w.example/api/", 1)
	cases := []struct {
		name, yaml, key, problem string
	}{
		{"not a mapping", "upstreams: [waldur]\n", "upstreams", "mapping"},
		{"upstream not a mapping", "upstreams: {waldur: 30s}\n", "upstreams.waldur", "mapping"},
		{"bad duration", "upstreams: {waldur: {timeout: soon}}\n", "upstreams.waldur.timeout", "duration"},
		{"negative duration", "upstreams: {rancher: {backoff_min: -1s}}\n", "upstreams.rancher.backoff_min", "positive"},
		{"timeout too short", "upstreams: {keycloak: {timeout: 1ms}}\n", "upstreams.keycloak.timeout", "between"},
		{"retries range", "upstreams: {openstack: {retries: 11}}\n", "upstreams.openstack.retries", "between 0 and 10"},
		{"retries fraction", "upstreams: {kubernetes: {retries: 1.5}}\n", "upstreams.kubernetes.retries", "whole number"},
		{"backoff order", "upstreams: {vault: {backoff_min: 2s, backoff_max: 1s}}\n", "upstreams.vault.backoff_max", "backoff_min"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Parse("agent.yaml", []byte(c.yaml+base), Options{Environ: noEnv})
			wantKeyError(t, err, c.key, c.problem)
		})
	}
	environ := func() []string { return []string{"SITE_AGENT_UPSTREAMS_WALDUR_RETRIES=many"} }
	_, _, err := Parse("agent.yaml", []byte(base), Options{Environ: environ})
	wantKeyError(t, err, "upstreams.waldur.retries", "")
}

func TestUpstreamsUnknownAreWarnings(t *testing.T) {
	y := "upstreams:\n  waldr: {timeout: 1s}\n  waldur: {timout: 1s}\n" + strings.Replace(minimal, "%s", "https://w.example/api/", 1)
	cfg, warnings, err := Parse("agent.yaml", []byte(y), Options{Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(warnings, "\n")
	if !strings.Contains(got, "upstreams.waldr: unknown upstream") || !strings.Contains(got, "upstreams.waldur.timout: unknown key") || len(warnings) != 2 {
		t.Errorf("warnings %q", got)
	}
	if cfg.Upstreams.Get(upstream.Waldur).Timeout != 0 {
		t.Errorf("a misspelt key must not set anything: %+v", cfg.Upstreams)
	}
}
