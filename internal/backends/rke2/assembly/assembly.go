// Package assembly assembles the rke2 backend from an offering's settings: the OpenStack side
// (novainfra), the Rancher side (rke2.Rancher on the shared Rancher client, rancher.go), the
// cluster Vault objects and, when Keycloak is configured, team access. It is the registry's
// constructor for backend_type rke2 and makes no network call.
package assembly

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/backends/rke2/argocd"
	"github.com/waldur/site-agent/internal/backends/rke2/novainfra"
	"github.com/waldur/site-agent/internal/clients/keycloak"
	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
	"github.com/waldur/site-agent/internal/clients/vault"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/upstream"
)

// New is the registry constructor.
func New(p backends.Params) (backends.Backend, []string, error) {
	s, warnings, err := rke2.DecodeSettings(p.Settings)
	if err != nil {
		return nil, warnings, err
	}
	log := p.Logger
	if log == nil {
		log = zap.NewNop()
	}
	infra, err := novainfra.New(&s, novainfra.Options{Logger: log.With(zap.String("upstream", "openstack")), Params: p})
	if err != nil {
		return nil, warnings, err
	}
	ranch, err := rancherapi.New(rancherapi.Config{URL: s.BackendURL, Token: secret.New(s.Username + ":" + s.Password.Reveal()),
		TLS: rancherapi.TLS{Insecure: !*s.VerifyCert}, Upstream: p.Upstreams.Get(upstream.Rancher)}, log.With(zap.String("upstream", "rancher")))
	if err != nil {
		return nil, warnings, fmt.Errorf("backend_settings.backend_url: %w", err)
	}
	global, _ := p.Secrets.(*vault.Admin) // the agent's vault: section
	admin, vaultWarnings, err := s.ConnectVault(global, p.Upstreams.Get(upstream.Vault))
	warnings = append(warnings, vaultWarnings...)
	if err != nil {
		return nil, warnings, err
	}
	deps := rke2.Deps{Infra: infra, Rancher: rancherPort{c: ranch}, Vault: rke2.NewClusterVault(admin, &s), Log: log}
	if s.ArgoCDNamespace != "" {
		kubeUp := p.Upstreams.Get(upstream.Kubernetes)
		if deps.ArgoCD, err = argocd.New(s.ArgoCDKubeconfig, s.ArgoCDNamespace, kubeUp.TimeoutOr(30*time.Second)); err != nil {
			return nil, warnings, err
		}
	}
	b := rke2.NewBackend(&s, p.Components, deps)
	if s.KeycloakURL == "" {
		return b, warnings, nil
	}
	kcUp := p.Upstreams.Get(upstream.Keycloak)
	kc, err := keycloak.New(keycloak.Config{URL: s.KeycloakURL, Realm: s.KeycloakRealm, UserRealm: s.KeycloakUserRealm,
		Username: s.KeycloakUsername, Password: s.KeycloakPassword, VerifyTLS: *s.KeycloakSSLVerify,
		Timeout: kcUp.TimeoutOr(keycloak.DefaultTimeout)}, log.With(zap.String("upstream", "keycloak")), keycloak.WithUpstream(kcUp))
	if err != nil {
		return nil, warnings, err
	}
	return rke2.WithAccess{Backend: b, Access: b.AccessFor(kc, "")}, warnings, nil
}
