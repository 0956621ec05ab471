package agent

import (
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/upstream"
	"github.com/waldur/site-agent/internal/waldurclient"
)

// ProbeClient builds a Waldur client for a one-off command (diagnostics, healthz,
// load-components) with the offering's own credentials — static token or OIDC on every path —
// and fewer retries than the agent's, unless upstreams.waldur sets them: a person is waiting.
// userAgent names the command and version ("site-agent-healthz/1.2.3").
func ProbeClient(cfg *config.Config, off config.Offering, userAgent string, log *zap.Logger) (*waldurclient.Client, error) {
	up := cfg.Upstreams.Get(upstream.Waldur)
	retry := up.RetryPolicy()
	if up.Retries == nil {
		retry.Max = 2 // a person is waiting
	}
	hc := waldurclient.NewHTTPClient(waldurclient.TransportOptions{VerifyTLS: off.VerifySSL, Proxy: cfg.GlobalProxy, Timeout: up.Timeout})
	opts := waldurclient.Options{BaseURL: off.APIURL, Token: off.Token, HTTPClient: hc, Logger: log, UserAgent: userAgent, Retry: retry}
	opts.OIDC = oidc(off)
	return waldurclient.New(opts)
}

// ProbeBackend builds the offering's backend of that name, from reg, for a one-off check
// (diagnostics) exactly as Build does — the upstreams section's timeouts and retries, the
// secret store of the vault section — with its roles and no decorators. The caller closes it
// (Set.Closer). It makes no network call.
func ProbeBackend(reg *backends.Registry, cfg *config.Config, off config.Offering, name string, log *zap.Logger) (backends.Set, error) {
	secrets, err := secretStore(cfg)
	if err != nil {
		return backends.Set{}, err
	}
	b, _, err := reg.New(name, backends.Params{Offering: off.Name, Settings: off.BackendSettings, Components: off.Components,
		Logger: log.With(zap.String("offering", off.Name), zap.String("backend", name)), Secrets: secrets, Upstreams: cfg.Upstreams})
	if err != nil {
		return backends.Set{}, backendErrors(cfg.Path, off, err)
	}
	return backends.RolesOf(name, b), nil
}

// oidc is the offering's client-credentials login (nil with a static token).
func oidc(off config.Offering) *waldurclient.OIDCConfig {
	if off.OIDC == nil {
		return nil
	}
	return &waldurclient.OIDCConfig{TokenURL: off.OIDC.TokenURL, ClientID: off.OIDC.ClientID, ClientSecret: off.OIDC.ClientSecret}
}
