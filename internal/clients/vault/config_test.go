package vault

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/waldur/site-agent/internal/secret"
)

func noEnv() []string { return nil }

// revealSecrets compares secret.Secret values by content (they never print).
var revealSecrets = cmp.Comparer(func(a, b secret.Secret) bool { return a.Reveal() == b.Reveal() })

func parseYAML(t *testing.T, text string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestParseConfigAccepts(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, yaml string
		env        []string
		want       Config
	}{
		{"token", `{address: "https://v:8200", ca_cert: "` + ca + `", auth: {method: token, token: "hvs.abcdefgh"}}`, nil,
			Config{Address: "https://v:8200", CACert: ca, Timeout: defaultTimeout, MaxRetries: defaultMaxRetries, BackoffMin: defaultBackoffMin, BackoffMax: defaultBackoffMax, Auth: AuthConfig{Method: "token", Token: secret.New("hvs.abcdefgh")}}},
		{"token from env", `{auth: {method: token}}`, []string{"VAULT_ADDR=http://127.0.0.1:8200", "VAULT_TOKEN=hvs.fromenv1"},
			Config{Address: "http://127.0.0.1:8200", Timeout: defaultTimeout, MaxRetries: defaultMaxRetries, BackoffMin: defaultBackoffMin, BackoffMax: defaultBackoffMax, Auth: AuthConfig{Method: "token", Token: secret.New("hvs.fromenv1")}}},
		{"approle", `{address: "https://v", namespace: team, timeout: 5s, max_retries: 0, backoff_min: 1s, backoff_max: 3s, auth: {method: approle, role_id: r1, secret_id: s3cr3t-id, mount: /ar/}}`, nil,
			Config{Address: "https://v", Namespace: "team", Timeout: 5 * time.Second, BackoffMin: time.Second, BackoffMax: 3 * time.Second, Auth: AuthConfig{Method: "approle", RoleID: "r1", SecretID: secret.New("s3cr3t-id"), Mount: "ar"}}},
		{"approle secret file", `{address: "https://v", auth: {method: approle, role_id: r1, secret_id_file: /etc/sid}}`, nil,
			Config{Address: "https://v", Timeout: defaultTimeout, MaxRetries: defaultMaxRetries, BackoffMin: defaultBackoffMin, BackoffMax: defaultBackoffMax, Auth: AuthConfig{Method: "approle", RoleID: "r1", SecretIDFile: "/etc/sid", Mount: "approle"}}},
		{"kubernetes defaults", `{address: "https://v", tls_skip_verify: yes, auth: {method: kubernetes, role: site-agent}}`, []string{"VAULT_NAMESPACE=ns1"},
			Config{Address: "https://v", TLSSkipVerify: true, Namespace: "ns1", Timeout: defaultTimeout, MaxRetries: defaultMaxRetries, BackoffMin: defaultBackoffMin, BackoffMax: defaultBackoffMax,
				Auth: AuthConfig{Method: "kubernetes", Role: "site-agent", Mount: "kubernetes", JWTFile: DefaultJWTFile}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseConfig(parseYAML(t, c.yaml), func() []string { return c.env })
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got, revealSecrets); diff != "" {
				t.Fatalf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseConfigKeepsSecretsAsSecrets(t *testing.T) {
	c, err := ParseConfig(parseYAML(t, `{address: "https://v", auth: {method: approle, role_id: r, secret_id: "sid-0123456789"}}`), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Auth.SecretID.Reveal() != "sid-0123456789" {
		t.Fatalf("secret id %q", c.Auth.SecretID.Reveal())
	}
	if s := strings.Join([]string{c.Auth.SecretID.String(), func() string { b, _ := yaml.Marshal(c); return string(b) }()}, " "); strings.Contains(s, "sid-0123456789") {
		t.Fatalf("secret id printed: %s", s)
	}
	env, err := ParseConfig(parseYAML(t, `{address: "https://v", auth: {method: token}}`), func() []string { return []string{"VAULT_TOKEN=hvs.env-token-1"} })
	if err != nil || env.Auth.Token.Reveal() != "hvs.env-token-1" {
		t.Fatalf("VAULT_TOKEN not used: %v", err)
	}
}

func TestParseConfigRejects(t *testing.T) {
	const tok = "hvs.VERYSECRET-token"
	cases := []struct {
		name, yaml string
		env        []string
		want       string
	}{
		{"bad method", `{address: "https://v", auth: {method: ldap}}`, nil, `vault.auth.method: must be token, approle or kubernetes, got "ldap"`},
		{"no method", `{address: "https://v", auth: {token: x}}`, nil, `vault.auth.method: must be token, approle or kubernetes, got ""`},
		{"no auth", `{address: "https://v"}`, nil, "vault.auth: required"},
		{"auth not a map", `{address: "https://v", auth: token}`, nil, "vault.auth: required"},
		{"no address", `{auth: {method: token, token: x}}`, nil, "vault.address: required (or set VAULT_ADDR)"},
		{"bad address", `{address: "vault:8200", auth: {method: token, token: x}}`, nil, "vault.address: must be an http:// or https:// URL"},
		{"unknown key", `{address: "https://v", adress: x, auth: {method: token, token: x}}`, nil, "vault.adress: unknown key"},
		{"unknown auth key", `{address: "https://v", auth: {method: token, token: x, roleid: y}}`, nil, "vault.auth.roleid: unknown key"},
		{"address not string", `{address: 8200, auth: {method: token, token: x}}`, nil, "vault.address: expected a string, got int"},
		{"skip verify not bool", `{address: "https://v", tls_skip_verify: "maybe", auth: {method: token, token: x}}`, nil, "vault.tls_skip_verify: expected true or false"},
		{"bad timeout", `{address: "https://v", timeout: 10, auth: {method: token, token: x}}`, nil, "vault.timeout: expected a string"},
		{"bad duration", `{address: "https://v", timeout: soon, auth: {method: token, token: x}}`, nil, `vault.timeout: expected a positive duration such as 30s, got "soon"`},
		{"retries range", `{address: "https://v", max_retries: 50, auth: {method: token, token: x}}`, nil, "vault.max_retries: must be between 0 and 10, got 50"},
		{"backoff order", `{address: "https://v", backoff_min: 3s, backoff_max: 1s, auth: {method: token, token: x}}`, nil, "vault.backoff_max: must not be below backoff_min (3s), got 1s"},
		{"missing ca", `{address: "https://v", ca_cert: /nonexistent/ca.pem, auth: {method: token, token: x}}`, nil, "vault.ca_cert: cannot read /nonexistent/ca.pem: no such file or directory"},
		{"token missing", `{address: "https://v", auth: {method: token}}`, nil, "vault.auth.token: required for method token (or set VAULT_TOKEN)"},
		{"token with mount", `{address: "https://v", auth: {method: token, token: x, mount: y}}`, nil, "vault.auth.mount: not used with method token"},
		{"approle no role", `{address: "https://v", auth: {method: approle, secret_id: s}}`, nil, "vault.auth.role_id: required for method approle"},
		{"approle no secret", `{address: "https://v", auth: {method: approle, role_id: r}}`, nil, "vault.auth.secret_id: required for method approle (or secret_id_file)"},
		{"approle both", `{address: "https://v", auth: {method: approle, role_id: r, secret_id: s, secret_id_file: f}}`, nil, "vault.auth.secret_id_file: set either secret_id or secret_id_file, not both"},
		{"approle with token", `{address: "https://v", auth: {method: approle, role_id: r, secret_id: s, token: "` + tok + `"}}`, nil, "vault.auth.token: only used with method token (method is approle)"},
		{"token with secret id", `{address: "https://v", auth: {method: token, token: x, secret_id: "` + tok + `"}}`, nil, "vault.auth.secret_id: only used with method approle (method is token)"},
		{"kubernetes no role", `{address: "https://v", auth: {method: kubernetes}}`, nil, "vault.auth.role: required for method kubernetes"},
		{"kubernetes with role_id", `{address: "https://v", auth: {method: kubernetes, role: r, role_id: x}}`, nil, "vault.auth.role_id: only used with method approle"},
		{"jwt_file with approle", `{address: "https://v", auth: {method: approle, role_id: r, secret_id: s, jwt_file: /t}}`, nil, "vault.auth.jwt_file: only used with method kubernetes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseConfig(parseYAML(t, c.yaml), func() []string { return c.env })
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if strings.Contains(err.Error(), tok) {
				t.Fatalf("error reveals a secret: %v", err)
			}
		})
	}
}
