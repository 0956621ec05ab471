package config

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// mapResolver resolves references from a map, counting lookups.
type mapResolver struct {
	values map[string]string
	calls  int
}

func (m *mapResolver) Resolve(_ context.Context, ref string) (string, error) {
	m.calls++
	v, ok := m.values[ref]
	if !ok {
		return "", errors.New("no such secret")
	}
	return v, nil
}

func TestVaultReferencesResolveBeforeDecoding(t *testing.T) {
	y := `vault: {address: "https://vault.example:8200", auth: {method: token, token: "s.x"}}
offerings:
  - name: A
    waldur_api_url: https://w.example/api/
    waldur_api_token: "vault:secret/site/waldur#token"
    waldur_offering_uuid: e2ef0000000000000000000000000001
    backend_type: rancher
    order_processing_backend: inmemory
    backend_settings:
      password: "vault:secret/site/rancher#secret_key"
      keycloak: {keycloak_password: "vault:secret/site/waldur#token"}
`
	res := &mapResolver{values: map[string]string{
		"vault:secret/site/waldur#token":       "resolved-token-123",
		"vault:secret/site/rancher#secret_key": "resolved-rancher-456",
	}}
	var seen map[string]any
	cfg, _, err := Parse("x.yaml", []byte(y), Options{Environ: noEnv, Resolver: func(section map[string]any) (Resolver, error) {
		seen = section
		return res, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Offerings[0]
	if o.Token.Reveal() != "resolved-token-123" || o.BackendSettings["password"] != "resolved-rancher-456" {
		t.Fatalf("not resolved: token %q settings %v", o.Token.Reveal(), o.BackendSettings)
	}
	kc, _ := asMap(o.BackendSettings["keycloak"])
	if kc["keycloak_password"] != "resolved-token-123" || res.calls != 2 {
		t.Fatalf("nested not resolved or fetched twice: %v, %d calls", kc, res.calls)
	}
	if seen["address"] != "https://vault.example:8200" {
		t.Fatalf("resolver got section %v", seen)
	}
	if strings.Contains(fmt.Sprintf("%+v", o), "resolved-token-123") {
		t.Fatal("resolved token printed")
	}
}

func TestVaultReferenceProblemsNameTheKey(t *testing.T) {
	base := `offerings:
  - name: A
    waldur_api_url: https://w.example/api/
    waldur_api_token: "vault:secret/site/waldur#token"
    waldur_offering_uuid: e2ef0000000000000000000000000001
    backend_type: x
`
	cases := []struct {
		name, yaml string
		resolver   NewResolver
		want       string
	}{
		{"no resolver", base, nil, "offerings[0].waldur_api_token"},
		{"no section", base, func(map[string]any) (Resolver, error) { return &mapResolver{}, nil }, "no top-level vault section"},
		{"bad section", "vault: {}\n" + base, func(map[string]any) (Resolver, error) { return nil, errors.New("vault.address is required") }, "vault: vault.address is required"},
		{"missing secret", "vault: {address: x}\n" + base, func(map[string]any) (Resolver, error) { return &mapResolver{}, nil }, "offerings[0].waldur_api_token: cannot resolve vault:secret/site/waldur#token: no such secret"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Parse("x.yaml", []byte(c.yaml), Options{Environ: noEnv, Resolver: c.resolver})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}
