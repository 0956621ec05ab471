package vaulttest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sv "github.com/waldur/site-agent/internal/clients/vault"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/secret"
)

// resolver is the real Vault resolver as the configuration loader takes it (the agent adapts it
// the same way; the client does not import the loader).
func resolver(section map[string]any) (config.Resolver, error) {
	r, err := sv.NewResolver(section)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// vaultYAML is the vault section of a configuration file for this cluster.
func (c *cluster) vaultYAML(token string) string {
	return fmt.Sprintf("vault:\n  address: %q\n  ca_cert: %q\n  auth:\n    method: token\n    token: %q\n", c.addr, c.caFile, token)
}

const offeringYAML = `offerings:
  - name: Cloud
    waldur_api_url: https://waldur.example/api/
    waldur_api_token: "vault:secret/site/waldur#token"
    waldur_offering_uuid: e2ef0000000000000000000000000001
    backend_type: inmemory
    order_processing_backend: inmemory
    backend_settings:
      password: "vault:kv1/rancher#secret_key"
      nested: {keycloak_password: "vault:secret/site/waldur#keycloak"}
`

// TestConfigLoadResolvesReferences goes through config.Load with the real resolver: values land
// in the configuration, the Waldur token as a secret.Secret that never prints, and a second load
// (what SIGHUP does) reads the secrets again.
func TestConfigLoadResolvesReferences(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	c.put(t, "secret/site/waldur", map[string]any{"token": "waldur-token-aaaa1111", "keycloak": "kc-pass-bbbb2222"})
	c.put(t, "kv1/rancher", map[string]any{"secret_key": "rancher-key-cccc3333"})
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(c.vaultYAML(c.token(t, "site-agent"))+offeringYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	load := func() *config.Config {
		cfg, _, err := config.Load(file, config.Options{Environ: func() []string { return nil }, Resolver: resolver})
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cfg := load()
	off := cfg.Offerings[0]
	nested, _ := off.BackendSettings["nested"].(map[string]any)
	if off.Token.Reveal() != "waldur-token-aaaa1111" || off.BackendSettings["password"] != "rancher-key-cccc3333" ||
		nested["keycloak_password"] != "kc-pass-bbbb2222" {
		t.Fatalf("not resolved: token %q, settings %v", off.Token.Reveal(), off.BackendSettings)
	}
	printed := fmt.Sprintf("%v %+v %#v %s", cfg, *cfg, off, off.Token)
	if strings.Contains(printed, "waldur-token-aaaa1111") {
		t.Fatal("the resolved token prints")
	}
	if got := secret.Scrub("upstream said: bad token waldur-token-aaaa1111"); strings.Contains(got, "aaaa1111") {
		t.Fatalf("resolved value not registered with the scrubber: %s", got)
	}
	c.put(t, "secret/site/waldur", map[string]any{"token": "waldur-token-dddd4444", "keycloak": "kc-pass-bbbb2222"})
	if got := load().Offerings[0].Token.Reveal(); got != "waldur-token-dddd4444" {
		t.Fatalf("reload kept %q", got)
	}
}

// TestConfigLoadErrorsNameKeyAndReference checks what an operator sees when a reference cannot
// be resolved or the vault section is wrong.
func TestConfigLoadErrorsNameKeyAndReference(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	c.put(t, "secret/site/waldur", map[string]any{"token": "waldur-token-aaaa1111"})
	c.put(t, "kv1/rancher", map[string]any{"secret_key": "rancher-key-cccc3333"})
	token := c.token(t, "site-agent")
	cases := []struct{ name, yaml, want string }{
		{"missing key", c.vaultYAML(token) + offeringYAML,
			`offerings[0].backend_settings.nested.keycloak_password: cannot resolve vault:secret/site/waldur#keycloak: key "keycloak" missing in secret secret/site/waldur (its keys: token)`},
		{"bad method", strings.Replace(c.vaultYAML(token), "method: token", "method: ldap", 1) + offeringYAML,
			`vault.auth.method: must be token, approle or kubernetes, got "ldap"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(file, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, err := config.Load(file, config.Options{Environ: func() []string { return nil }, Resolver: resolver})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %q", err, tc.want)
			}
			for _, s := range []string{token, "waldur-token-aaaa1111", "rancher-key-cccc3333"} {
				if strings.Contains(err.Error(), s) {
					t.Fatalf("error reveals a secret: %v", err)
				}
			}
		})
	}
}
