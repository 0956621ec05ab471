package assembly

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/clients/vault"
	"github.com/waldur/site-agent/internal/sim/simfault"
	"github.com/waldur/site-agent/internal/sim/vaultsim"
	"github.com/waldur/site-agent/internal/upstream"
)

const (
	vaultRoot = "hvs.vault-root-token"
	// mountRead is the first request of the Vault probe (the AppRole mount's type).
	mountRead = "/v1/sys/internal/ui/mounts/auth/approle"
)

// rke2Settings is a valid rke2 backend_settings section without Vault keys, plus kv.
func rke2Settings(kv map[string]any) backends.Settings {
	s := backends.Settings{
		"backend_url": "https://rancher.example.com", "username": "token-abcde", "password": "rancher-secret-key",
		"base_image_name": "ubuntu-24.04", "managed_rancher_server_flavor_name": "m1.large",
		"openstack": map[string]any{"auth_url": "https://keystone.example.com:5000/v3", "username": "admin",
			"password": "os-admin-password", "project_name": "k8s-clusters", "external_network_name": "public"},
	}
	for k, v := range kv {
		s[k] = v
	}
	return s
}

// vaultServer is a Vault simulator over TLS; slow, when set, delays the answers to the probe's
// first request.
func vaultServer(t *testing.T, slow time.Duration) (*vaultsim.Server, string) {
	t.Helper()
	sim := vaultsim.New(vaultRoot, nil)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slow > 0 && r.URL.Path == mountRead {
			time.Sleep(slow)
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return sim, srv.URL
}

// globalVault is the agent's client of a vault: section pointing at address.
func globalVault(t *testing.T, address string) *vault.Admin {
	t.Helper()
	a, err := vault.NewAdmin(map[string]any{"address": address, "tls_skip_verify": true,
		"auth": map[string]any{"method": "token", "token": vaultRoot}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// flatKeys are the deprecated keys for a Vault at address.
func flatKeys(t *testing.T, address string) map[string]any {
	t.Helper()
	u, err := url.Parse(address)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"vault_host": u.Hostname(), "vault_port": port, "vault_token": vaultRoot, "vault_tls_verify": false}
}

// vaultProbe runs the built backend's Vault diagnostics.
func vaultProbe(t *testing.T, b backends.Backend) backends.Check {
	t.Helper()
	for _, p := range b.(backends.Diagnoser).Probes() {
		if p.Upstream == "vault" {
			return p.Run(context.Background())[0]
		}
	}
	t.Fatal("no vault probe")
	return backends.Check{}
}

// Without flat keys the backend uses the agent's vault: section, and says nothing about it.
func TestRKE2UsesTheVaultSection(t *testing.T) {
	sim, addr := vaultServer(t, 0)
	b, warnings, err := New(backends.Params{Settings: rke2Settings(nil), Secrets: globalVault(t, addr)})
	if err != nil || len(warnings) > 0 {
		t.Fatalf("New: %v, warnings %v", err, warnings)
	}
	if c := vaultProbe(t, b); !c.OK {
		t.Fatalf("vault probe through the vault: section: %+v", c)
	}
	if sim.Calls("GET "+mountRead) != 1 {
		t.Errorf("the vault: section's Vault was not asked: %d mount reads", sim.Calls("GET "+mountRead))
	}
	// Without either, the error says what to configure.
	_, _, err = New(backends.Params{Settings: rke2Settings(nil)})
	if err == nil || !strings.Contains(err.Error(), "configure the top-level vault: section") {
		t.Errorf("no Vault at all: %v", err)
	}
}

// The incumbent's flat keys still work, each with a warning naming its replacement; with a
// vault: section as well they are an error naming both.
func TestRKE2FlatVaultKeysAreDeprecatedAliases(t *testing.T) {
	sim, addr := vaultServer(t, 0)
	b, warnings, err := New(backends.Params{Settings: rke2Settings(flatKeys(t, addr))})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"vault_host": "vault.address", "vault_port": "vault.address", "vault_token": "vault.auth.token",
		"vault_tls_verify": "vault.tls_skip_verify"}
	if len(warnings) != len(want) {
		t.Errorf("warnings %q: want one per flat key", warnings)
	}
	for _, w := range warnings {
		key, _, _ := strings.Cut(strings.TrimPrefix(w, "backend_settings."), ":")
		if repl, ok := want[key]; !ok || !strings.Contains(w, "deprecated") || !strings.Contains(w, repl) {
			t.Errorf("warning %q: want the key, deprecated and %s", w, repl)
		}
	}
	if c := vaultProbe(t, b); !c.OK || sim.Calls("GET "+mountRead) != 1 {
		t.Fatalf("vault probe through the flat keys: %+v", c)
	}
	_, _, err = New(backends.Params{Settings: rke2Settings(flatKeys(t, addr)), Secrets: globalVault(t, addr)})
	if err == nil || !strings.Contains(err.Error(), "backend_settings.vault_host") || !strings.Contains(err.Error(), "vault.address") {
		t.Errorf("flat keys and a vault: section: want an error naming both, got %v", err)
	}
}

// upstreams.vault's retries and timeout reach the flat keys' client (the vault: section gets
// them from the configuration loader).
func TestRKE2FlatVaultKeysTakeUpstreamsVault(t *testing.T) {
	for _, retries := range []int{0, 2} {
		sim, addr := vaultServer(t, 0)
		sim.FailNext("sys.mounts", 5, simfault.Status503)
		up := upstream.Settings{Retries: &retries, BackoffMin: time.Millisecond, BackoffMax: time.Millisecond}
		b, _, err := New(backends.Params{Settings: rke2Settings(flatKeys(t, addr)), Upstreams: upstream.Upstreams{upstream.Vault: up}})
		if err != nil {
			t.Fatal(err)
		}
		if c := vaultProbe(t, b); c.OK {
			t.Fatalf("probe passed through a failing Vault: %+v", c)
		}
		if got := sim.Calls("GET " + mountRead); got != retries+1 {
			t.Errorf("upstreams.vault retries %d: %d attempts, want %d", retries, got, retries+1)
		}
	}
	_, addr := vaultServer(t, time.Second)
	zero := 0
	up := upstream.Settings{Timeout: 100 * time.Millisecond, Retries: &zero}
	b, _, err := New(backends.Params{Settings: rke2Settings(flatKeys(t, addr)), Upstreams: upstream.Upstreams{upstream.Vault: up}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if c := vaultProbe(t, b); c.OK || time.Since(start) > 700*time.Millisecond {
		t.Errorf("upstreams.vault timeout 100ms: probe %+v after %s", c, time.Since(start))
	}
}
