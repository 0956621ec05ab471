package config

import (
	"strings"
	"testing"
)

// Every plain-text or unverified connection is named once, by its key, at load; loopback
// addresses and the secure defaults are not.
func TestPlainTextTransportsAreWarned(t *testing.T) {
	text := `
vault:
  address: http://vault.example.com:8200
  tls_skip_verify: true
  auth: {method: token, token: vault-token-1}
offerings:
  - name: A
    waldur_api_url: http://waldur.example.com/api/
    waldur_api_token: tok-123456
    waldur_offering_uuid: e2ef0000-0000-0000-0000-000000000001
    backend_type: rancher
    verify_ssl: false
    stomp_enabled: true
    websocket_use_tls: false
    backend_settings:
      backend_url: http://rancher.example.com
      verify_cert: false
      keycloak:
        keycloak_url: http://keycloak.example.com/auth/
        keycloak_ssl_verify: false
  - name: B
    waldur_api_url: http://127.0.0.1:8000/api/
    waldur_api_token: tok-123456
    waldur_offering_uuid: e2ef0000-0000-0000-0000-000000000002
    backend_type: rke2
    verify_ssl: false
    stomp_enabled: true
    websocket_use_tls: false
    backend_settings:
      backend_url: http://localhost:8443
      verify_cert: false
      keycloak_url: https://keycloak.example.com/auth/
      keycloak_ssl_verify: true
      vault_host: "[::1]"
      vault_tls_verify: false
      openstack:
        auth_url: http://keystone.example.com:5000/v3
`
	_, warnings, err := Parse("plain.yaml", []byte(text), Options{Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(warnings, "\n")
	want := []string{
		"vault.address: credentials is sent in plain text to vault.example.com:8200",
		"vault.tls_skip_verify: true",
		"offerings[0].waldur_api_url: the Waldur API token is sent in plain text to waldur.example.com",
		"offerings[0].verify_ssl: false",
		"offerings[0].websocket_use_tls: false: the event broker waldur.example.com",
		"offerings[0].backend_settings.backend_url: credentials is sent in plain text to rancher.example.com",
		"offerings[0].backend_settings.verify_cert: false",
		"offerings[0].backend_settings.keycloak.keycloak_url: credentials is sent in plain text to keycloak.example.com",
		"offerings[0].backend_settings.keycloak.keycloak_ssl_verify: false",
		"offerings[1].backend_settings.openstack.auth_url: credentials is sent in plain text to keystone.example.com:5000",
	}
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("no warning %q in:\n%s", w, all)
		}
	}
	if len(warnings) != len(want) {
		t.Errorf("%d warnings, want %d (loopback and secure settings are not named):\n%s", len(warnings), len(want), all)
	}
	for _, quiet := range []string{"offerings[1].waldur_api_url", "offerings[1].verify_ssl", "offerings[1].websocket_use_tls",
		"offerings[1].backend_settings.backend_url", "offerings[1].backend_settings.verify_cert", "vault_tls_verify", "keycloak_ssl_verify: true"} {
		if strings.Contains(all, quiet) {
			t.Errorf("loopback or secure setting named: %s\n%s", quiet, all)
		}
	}
}
