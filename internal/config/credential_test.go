package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/secret"
)

const credentialConfig = `vault: {address: "https://vault.example:8200", auth: {method: token, token: "credential:vault-token"}}
offerings:
  - name: A
    waldur_api_url: https://w.example/api/
    waldur_api_token: "credential:waldur-token"
    waldur_offering_uuid: e2ef0000000000000000000000000001
    backend_type: rancher
    order_processing_backend: inmemory
    backend_settings:
      password: "credential:rancher-secret"
      keycloak: {keycloak_password: "vault:secret/site/kc#password"}
`

// credentialsDir writes systemd-style credential files (one per name) and returns the directory.
func credentialsDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o400); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCredentialReferencesReadTheCredentialsDirectory(t *testing.T) {
	dir := credentialsDir(t, map[string]string{
		"waldur-token":   "cred-token-0123456789\n", // as `echo token > file` writes it
		"rancher-secret": "cred-rancher-secret-42",
		"vault-token":    "s.cred-vault-token",
	})
	environ := func() []string { return []string{"CREDENTIALS_DIRECTORY=" + dir} }
	var section map[string]any
	cfg, _, err := Parse("x.yaml", []byte(credentialConfig), Options{Environ: environ, Resolver: func(s map[string]any) (Resolver, error) {
		section = s
		return &mapResolver{values: map[string]string{"vault:secret/site/kc#password": "kc-pass"}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Offerings[0]
	if o.Token.Reveal() != "cred-token-0123456789" || o.BackendSettings["password"] != "cred-rancher-secret-42" {
		t.Fatalf("not resolved (or the newline kept): token %q, password %v", o.Token.Reveal(), o.BackendSettings["password"])
	}
	if auth, _ := asMap(section["auth"]); auth["token"] != "s.cred-vault-token" {
		t.Fatalf("the vault section reached its resolver without the credential: %v", section)
	}
	if kc, _ := asMap(o.BackendSettings["keycloak"]); kc["keycloak_password"] != "kc-pass" {
		t.Fatalf("vault: references beside credentials not resolved: %v", kc)
	}
	line := fmt.Sprintf("login failed with cred-rancher-secret-42 and %v", o.BackendSettings)
	if s := secret.Scrub(line); strings.Contains(s, "cred-rancher-secret-42") {
		t.Fatalf("a credential's value is not registered with the scrubber: %s", s)
	}
	if strings.Contains(fmt.Sprintf("%+v", o), "cred-token-0123456789") {
		t.Fatal("the token read from a credential printed")
	}
}

func TestCredentialProblemsNameTheKey(t *testing.T) {
	dir := credentialsDir(t, map[string]string{"waldur-token": "x", "empty": "\n"})
	conf := func(ref string) string {
		return `offerings:
  - name: A
    waldur_api_url: https://w.example/api/
    waldur_api_token: t
    waldur_offering_uuid: e2ef0000000000000000000000000001
    backend_type: inmemory
    order_processing_backend: inmemory
    backend_settings: {password: "` + ref + `"}
`
	}
	cases := []struct {
		name, ref, dir, want string
	}{
		{"no directory", "credential:waldur-token", "", "offerings[0].backend_settings.password: refers to credential:waldur-token but $CREDENTIALS_DIRECTORY is not set"},
		{"unknown", "credential:rancher-secret", dir, `offerings[0].backend_settings.password: credential "rancher-secret" is not in $CREDENTIALS_DIRECTORY`},
		{"path", "credential:../waldur-token", dir, `offerings[0].backend_settings.password: "credential:../waldur-token" is not a credential name`},
		{"no name", "credential:", dir, "is not a credential name"},
		{"empty", "credential:empty", dir, `offerings[0].backend_settings.password: credential "empty" is empty`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			environ := func() []string { return []string{"CREDENTIALS_DIRECTORY=" + c.dir} }
			if c.dir == "" {
				environ = noEnv
			}
			_, _, err := Parse("x.yaml", []byte(conf(c.ref)), Options{Environ: environ})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if es, ok := err.(Errors); !ok || len(es) != 1 {
				t.Fatalf("%T is not a configuration error (exit 2)", err)
			}
		})
	}
}
