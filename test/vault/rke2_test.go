package vaulttest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/vault/api"
	"gopkg.in/yaml.v3"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/rke2"
	sv "github.com/waldur/site-agent/internal/clients/vault"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/upstream"
)

// clusterVault is the rke2 backend's Vault side for the example offering (configs/rke2.yaml),
// on a vault: section pointing at c with token, as the agent builds it.
func clusterVault(t *testing.T, c *cluster, token string) *rke2.ClusterVault {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "configs", "rke2.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Offerings []struct {
			BackendSettings map[string]any `yaml:"backend_settings"`
		} `yaml:"offerings"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil || len(doc.Offerings) == 0 {
		t.Fatalf("configs/rke2.yaml: %v", err)
	}
	s, _, err := rke2.DecodeSettings(backends.Settings(doc.Offerings[0].BackendSettings))
	if err != nil {
		t.Fatal(err)
	}
	global, err := sv.NewAdmin(c.section(map[string]any{"method": "token", "token": token}))
	if err != nil {
		t.Fatal(err)
	}
	admin, warnings, err := s.ConnectVault(global, upstream.Settings{})
	if err != nil || len(warnings) > 0 {
		t.Fatalf("the vault: section: %v %v", err, warnings)
	}
	return rke2.NewClusterVault(admin, &s)
}

// TestClusterVaultSingleUseSecretIDs runs the rke2 backend's node bootstrap against a real
// Vault core: the cluster's policy, AppRole and token secret are written; a node's secret id
// logs in once and its token reads the cluster token; the same secret id is refused the second
// time, and the login token cannot be used twice; Remove deletes all three, twice over.
func TestClusterVaultSingleUseSecretIDs(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t)
	if err := c.root.Sys().EnableAuthWithOptions("approle", &api.EnableAuthOptions{Type: "approle"}); err != nil {
		t.Fatal(err)
	}
	v := clusterVault(t, c, c.root.Token())
	const cluster = "0123456789abcdef0123456789abcdef"
	if check := v.Check(ctx); !check.OK {
		t.Fatalf("diagnostics: %+v", check)
	}
	if err := v.Ensure(ctx, cluster, secret.New("registration-token-x")); err != nil {
		t.Fatal(err)
	}
	creds, err := v.NodeCredentials(ctx, cluster)
	if err != nil {
		t.Fatal(err)
	}
	node := nodeClient(t, c)
	login := func() (*api.Secret, error) {
		return node.Logical().Write("auth/approle/login", map[string]any{"role_id": creds.RoleID, "secret_id": creds.SecretID.Reveal()})
	}
	sec, err := login()
	if err != nil || sec.Auth == nil {
		t.Fatalf("first login: %v", err)
	}
	node.SetToken(sec.Auth.ClientToken)
	kv, err := node.Logical().Read("secret/data/" + rke2.VaultSecretPath(cluster))
	if err != nil || kv == nil {
		t.Fatalf("reading the token with the login token: %v", err)
	}
	if got := kv.Data["data"].(map[string]any)["token"]; got != "registration-token-x" {
		t.Fatalf("token %v", got)
	}
	if _, err := node.Logical().Read("secret/data/" + rke2.VaultSecretPath(cluster)); err == nil {
		t.Fatal("the single-use login token read the secret twice")
	}
	node.ClearToken()
	if _, err := login(); err == nil {
		t.Fatal("a used secret id logged in again")
	}
	for range 2 {
		if err := v.Remove(ctx, cluster); err != nil {
			t.Fatal(err)
		}
	}
	if p, _ := c.root.Sys().GetPolicy(rke2.VaultPolicyName(cluster)); p != "" {
		t.Fatalf("policy left: %q", p)
	}
	if r, _ := c.root.Logical().Read("auth/approle/role/" + rke2.VaultRoleName(cluster)); r != nil {
		t.Fatal("approle left")
	}
	if m, _ := c.root.Logical().Read("secret/metadata/" + rke2.VaultSecretPath(cluster)); m != nil {
		t.Fatal("token secret left")
	}
}

// nodeClient is a Vault client with no token that trusts c's CA, as a VM with its CA would.
func nodeClient(t *testing.T, c *cluster) *api.Client {
	t.Helper()
	cfg := api.DefaultConfig()
	cfg.Address = c.addr
	if err := cfg.ConfigureTLS(&api.TLSConfig{CACert: c.caFile}); err != nil {
		t.Fatal(err)
	}
	cl, err := api.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cl.ClearToken()
	return cl
}

// TestClusterVaultJoinTokenMadeOnce runs bootstrap rke2's join token against a real Vault core:
// the token is created only for the initial server, with check-and-set, so a second create
// (another agent, or a retry after a lost answer) is refused by Vault itself and the stored
// token stays; the import URL is updated around it; RemoveAccess keeps the secret, a later
// scale-up finds the same token, and Remove deletes it.
func TestClusterVaultJoinTokenMadeOnce(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t)
	if err := c.root.Sys().EnableAuthWithOptions("approle", &api.EnableAuthOptions{Type: "approle"}); err != nil {
		t.Fatal(err)
	}
	v := clusterVault(t, c, c.root.Token())
	const cluster = "abcdef0123456789abcdef0123456789"
	js := func(u string) rke2.JoinSecret { return rke2.JoinSecret{ImportURL: secret.New(u)} }
	stored := func() (string, string) {
		kv, err := c.root.Logical().Read("secret/data/" + rke2.VaultSecretPath(cluster))
		if err != nil || kv == nil {
			return "", ""
		}
		d := kv.Data["data"].(map[string]any)
		tok, _ := d["token"].(string)
		u, _ := d["import_url"].(string)
		return tok, u
	}
	if err := v.EnsureJoin(ctx, cluster, js("https://rancher.example.com/v3/import/a_c-m-1.yaml"), false); err == nil {
		t.Fatal("a token was made for a joining node")
	}
	if err := v.EnsureJoin(ctx, cluster, js("https://rancher.example.com/v3/import/a_c-m-1.yaml"), true); err != nil {
		t.Fatal(err)
	}
	first, _ := stored()
	// What a second agent (or a retried create) sends: Vault refuses the check-and-set write,
	// and the client says so.
	cfg, err := sv.ParseConfig(c.section(map[string]any{"method": "token", "token": c.root.Token()}), nil)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sv.NewAdminFromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = admin.PutCAS(ctx, "secret/"+rke2.VaultSecretPath(cluster), map[string]string{"token": "second"}, 0)
	if !errors.Is(err, sv.ErrVersionMismatch) {
		t.Fatalf("a second create: %v, want a version mismatch", err)
	}
	if _, version, err := admin.GetVersioned(ctx, "secret/"+rke2.VaultSecretPath(cluster)); err != nil || version != 1 {
		t.Fatalf("version %d, %v", version, err)
	}
	if err := v.RemoveAccess(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	if err := v.EnsureJoin(ctx, cluster, js("https://rancher.example.com/v3/import/b_c-m-1.yaml"), false); err != nil {
		t.Fatal(err)
	}
	if tok, u := stored(); len(first) != 64 || tok != first || u != "https://rancher.example.com/v3/import/b_c-m-1.yaml" {
		t.Fatalf("after the scale-up: token kept %v, import URL %q", tok == first, u)
	}
	if err := v.Remove(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	if tok, _ := stored(); tok != "" {
		t.Fatal("the join token is left after Remove")
	}
}
