package rke2

import (
	"fmt"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/clients/vault"
	"github.com/waldur/site-agent/internal/upstream"
)

// The backend's Vault (the per-cluster policy, AppRole and token secret; nodes log in to it)
// is the agent's: the top-level vault: section, which reaches the backend as its secret store
// (backends.Params.Secrets, a *vault.Admin), with upstreams.vault's timeout and retries. The
// incumbent's flat keys still work for an agent without a vault: section, each with a
// deprecation warning naming its replacement; the two at once are a configuration error.

// vaultAliases are the deprecated keys and what replaces each.
var vaultAliases = []struct{ key, replacement string }{
	{"vault_host", "vault.address"},
	{"vault_port", "vault.address"},
	{"vault_token", "vault.auth.token (vault.auth.method: token)"},
	{"vault_tls_verify", "vault.tls_skip_verify"},
}

// vaultSource is which Vault the settings chose (ConnectVault).
type vaultSource struct {
	aliases []string     // the deprecated keys present in backend_settings
	global  *vault.Admin // the agent's, when used
}

// presentVaultAliases lists the deprecated keys an offering's backend_settings sets.
func presentVaultAliases(in backends.Settings) []string {
	var out []string
	for _, a := range vaultAliases {
		if v, ok := in[a.key]; ok && v != nil {
			out = append(out, a.key)
		}
	}
	return out
}

var vaultHostRe = &lazyRegexp{pattern: `^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$`}

// validateVaultAliases checks the deprecated keys that are set.
func (s *Settings) validateVaultAliases() error {
	if len(s.aliases) == 0 {
		return nil
	}
	if !vaultHostRe.get().MatchString(s.VaultHost) {
		return fmt.Errorf("backend_settings.vault_host: want a host name or IP with vault_port, vault_token and vault_tls_verify "+
			"(deprecated: better the top-level vault: section), got %q", s.VaultHost)
	}
	if s.VaultPort < 1 || s.VaultPort > 65535 {
		return fmt.Errorf("backend_settings.vault_port: must be between 1 and 65535, got %d", s.VaultPort)
	}
	if s.VaultToken.IsZero() {
		return fmt.Errorf("backend_settings.vault_token: is required with vault_host (it creates the per-cluster policy and AppRole)")
	}
	return nil
}

// ConnectVault chooses the backend's Vault: global, the agent's client of its vault: section
// (nil without one), or the one the deprecated flat keys name, reached with up (the
// configuration's upstreams.vault). It makes no network call. The warnings name each
// deprecated key in use and its replacement.
func (s *Settings) ConnectVault(global *vault.Admin, up upstream.Settings) (*vault.Admin, []string, error) {
	if global != nil {
		if len(s.aliases) > 0 {
			a := s.aliases[0]
			return nil, nil, fmt.Errorf("backend_settings.%s: set, and so is the top-level vault: section (%s): keep one, the vault: section "+
				"(backend_settings.vault_host, vault_port, vault_token and vault_tls_verify are deprecated)", a, replacement(a))
		}
		if ns := global.Namespace(); ns != "" {
			return nil, nil, fmt.Errorf("backend_settings: the rke2 backend cannot use the vault: section's namespace %q: its nodes log in "+
				"to Vault without one", ns)
		}
		s.global = global
		return global, nil, nil
	}
	if len(s.aliases) == 0 {
		return nil, nil, fmt.Errorf("backend_settings: the rke2 backend needs Vault (nodes read their join token from it): " +
			"configure the top-level vault: section")
	}
	warnings := make([]string, 0, len(s.aliases))
	for _, a := range s.aliases {
		warnings = append(warnings, fmt.Sprintf("backend_settings.%s: deprecated: set %s in the top-level vault: section instead", a, replacement(a)))
	}
	a, err := vault.NewAdminFromConfig(vault.TokenConfig(s.VaultAddr(), s.VaultToken, !*s.VaultTLSVerify).WithUpstream(up))
	if err != nil {
		return nil, warnings, fmt.Errorf("backend_settings.vault_host: %w", err)
	}
	return a, warnings, nil
}

func replacement(key string) string {
	for _, a := range vaultAliases {
		if a.key == key {
			return a.replacement
		}
	}
	return ""
}

// VaultAddr is the Vault address of the deprecated flat keys.
func (s *Settings) VaultAddr() string { return fmt.Sprintf("https://%s:%d", s.VaultHost, s.VaultPort) }

// VaultEndpoint is the Vault nodes log in to and whether they skip the check of its
// certificate: the vault: section's once ConnectVault chose it, else the flat keys'.
func (s *Settings) VaultEndpoint() (addr string, tlsSkipVerify bool) {
	if s.global != nil {
		return s.global.Address(), s.global.TLSSkipVerify()
	}
	return s.VaultAddr(), !*s.VaultTLSVerify
}
