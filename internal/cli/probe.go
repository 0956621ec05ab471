package cli

import (
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/upstream"
	"github.com/waldur/site-agent/internal/waldurclient"
)

// newProbeClient builds a Waldur client for a one-off command (diagnostics, healthz,
// load-components) with the offering's own credentials — static token or OIDC on every path.
func newProbeClient(cfg *config.Config, off config.Offering, command string, log *zap.Logger) (*waldurclient.Client, error) {
	up := cfg.Upstreams.Get(upstream.Waldur)
	retry := up.RetryPolicy()
	if up.Retries == nil {
		retry.Max = 2 // a person is waiting
	}
	hc := waldurclient.NewHTTPClient(waldurclient.TransportOptions{VerifyTLS: off.VerifySSL, Proxy: cfg.GlobalProxy, Timeout: up.Timeout})
	opts := waldurclient.Options{BaseURL: off.APIURL, Token: off.Token, HTTPClient: hc, Logger: log,
		UserAgent: "site-agent-" + command + "/" + Version, Retry: retry}
	if off.OIDC != nil {
		opts.OIDC = &waldurclient.OIDCConfig{TokenURL: off.OIDC.TokenURL, ClientID: off.OIDC.ClientID, ClientSecret: off.OIDC.ClientSecret}
	}
	return waldurclient.New(opts)
}
