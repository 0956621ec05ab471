package vault

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/vault/api"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/vaultsim"
)

func newAdmin(t *testing.T) (*Admin, *vaultsim.Server, string) {
	t.Helper()
	sim := vaultsim.New("admin-root-token", nil)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	a, err := NewAdminFromConfig(Config{Address: srv.URL, Timeout: 5 * time.Second, MaxRetries: 0,
		Auth: AuthConfig{Method: MethodToken, Token: secret.New("admin-root-token")}})
	if err != nil {
		t.Fatal(err)
	}
	return a, sim, srv.URL
}

// TestAdminAppRoleLifecycle: policy, AppRole and secret made by the Admin; a node logs in with
// the role id and a fresh secret id, reads the secret once; the secret id is refused the second
// time; cleanup removes everything and is idempotent.
func TestAdminAppRoleLifecycle(t *testing.T) {
	ctx := context.Background()
	a, sim, addr := newAdmin(t)
	rules := `{"path": {"secret/data/rancher/cluster-u": {"capabilities": ["read"]}}}`
	if err := a.PutPolicy(ctx, "rancher-provisioning-policy-u", rules); err != nil {
		t.Fatal(err)
	}
	role := AppRole{TokenPolicies: []string{"rancher-provisioning-policy-u"}, SecretIDTTL: "60m", SecretIDNumUses: 1, TokenNumUses: 1, TokenTTL: "60m", TokenMaxTTL: "60m"}
	for range 2 { // idempotent
		if err := a.PutAppRole(ctx, "approle", "rancher-provisioning-role-u", role); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Put(ctx, "secret/rancher/cluster-u", map[string]string{"token": "registration-token"}); err != nil {
		t.Fatal(err)
	}
	roleID, err := a.RoleID(ctx, "approle", "rancher-provisioning-role-u")
	if err != nil {
		t.Fatal(err)
	}
	sid, err := a.NewSecretID(ctx, "approle", "rancher-provisioning-role-u")
	if err != nil {
		t.Fatal(err)
	}
	defer sid.Forget()
	if strings.Contains(fmt.Sprint(sid), sid.Reveal()) {
		t.Fatal("a secret id prints")
	}
	nodeLogsInOnce(t, addr, roleID, sid.Reveal())
	if typ, ok, err := a.AuthMount(ctx, "approle"); err != nil || !ok || typ != "approle" {
		t.Errorf("auth mount approle: %q %v %v", typ, ok, err)
	}
	if _, ok, err := a.AuthMount(ctx, "nowhere"); err != nil || ok {
		t.Errorf("auth mount nowhere: visible %v, %v", ok, err)
	}
	for range 2 { // cleanup, twice
		if err := a.DeletePolicy(ctx, "rancher-provisioning-policy-u"); err != nil {
			t.Fatal(err)
		}
		if err := a.DeleteAppRole(ctx, "approle", "rancher-provisioning-role-u"); err != nil {
			t.Fatal(err)
		}
		if err := a.Delete(ctx, "secret/rancher/cluster-u"); err != nil {
			t.Fatal(err)
		}
	}
	if sim.Policy("rancher-provisioning-policy-u") || sim.Role("approle/rancher-provisioning-role-u") || sim.Secret("secret/rancher/cluster-u") != nil {
		t.Error("objects left after cleanup")
	}
	if _, err := a.RoleID(ctx, "approle", "rancher-provisioning-role-u"); !errors.Is(err, failure.ErrNotFound) {
		t.Errorf("role id of a deleted role: %v", err)
	}
}

func nodeClient(t *testing.T, addr string) *api.Client {
	t.Helper()
	cfg := api.DefaultConfig()
	cfg.Address, cfg.MaxRetries = addr, 0
	c, err := api.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.ClearToken()
	return c
}

func TestAdminRefusesBadNamesAndReportsDenials(t *testing.T) {
	ctx := context.Background()
	a, _, addr := newAdmin(t)
	if err := a.PutPolicy(ctx, "../sys", "{}"); err == nil {
		t.Error("a path-like policy name was accepted")
	}
	if err := a.PutAppRole(ctx, "approle", "a role", AppRole{}); err == nil {
		t.Error("a role name with a space was accepted")
	}
	weak, err := NewAdminFromConfig(Config{Address: addr, Timeout: 5 * time.Second, Auth: AuthConfig{Method: MethodToken, Token: secret.New("not-a-valid-token")}})
	if err != nil {
		t.Fatal(err)
	}
	err = weak.PutPolicy(ctx, "p", `{"path": {"x": {"capabilities": ["read"]}}}`)
	if err == nil || !strings.Contains(err.Error(), "writing policy p") || !strings.Contains(err.Error(), "403") || strings.Contains(err.Error(), "not-a-valid-token") {
		t.Errorf("denied write: %v", err)
	}
}

// nodeLogsInOnce plays a node: log in, read the token once; the secret id is refused after.
func nodeLogsInOnce(t *testing.T, addr, roleID, secretID string) {
	t.Helper()
	node := nodeClient(t, addr)
	login := map[string]any{"role_id": roleID, "secret_id": secretID}
	sec, err := node.Logical().Write("auth/approle/login", login)
	if err != nil {
		t.Fatal(err)
	}
	node.SetToken(sec.Auth.ClientToken)
	kv, err := node.Logical().Read("secret/data/rancher/cluster-u")
	if err != nil || kv.Data["data"].(map[string]any)["token"] != "registration-token" {
		t.Fatalf("node read: %v %+v", err, kv)
	}
	node.ClearToken()
	if _, err := node.Logical().Write("auth/approle/login", login); err == nil {
		t.Fatal("the single-use secret id was accepted twice")
	}
}

// TestAdminCheckAndSet: PutCAS creates a secret once (version 0), replaces it only over the
// version read, and a write over another version changes nothing and says so.
func TestAdminCheckAndSet(t *testing.T) {
	ctx := context.Background()
	a, sim, _ := newAdmin(t)
	const path = "secret/rancher/cluster-u"
	if _, _, err := a.GetVersioned(ctx, path); !errors.Is(err, failure.ErrNotFound) {
		t.Fatalf("absent secret: %v", err)
	}
	if err := a.PutCAS(ctx, path, map[string]string{"token": "first-join-token"}, 0); err != nil {
		t.Fatal(err)
	}
	err := a.PutCAS(ctx, path, map[string]string{"token": "second-join-token"}, 0)
	if !errors.Is(err, ErrVersionMismatch) || failure.IsTransient(err) {
		t.Fatalf("second create: %v, want a permanent version mismatch", err)
	}
	data, version, err := a.GetVersioned(ctx, path)
	if err != nil || data["token"] != "first-join-token" || version != 1 {
		t.Fatalf("read %v version %d: %v", data, version, err)
	}
	if err := a.PutCAS(ctx, path, map[string]string{"token": data["token"], "import_url": "https://r/x.yaml"}, version); err != nil {
		t.Fatal(err)
	}
	if err := a.PutCAS(ctx, path, map[string]string{"token": "stale"}, version); !errors.Is(err, ErrVersionMismatch) {
		t.Fatalf("write over a stale version: %v", err)
	}
	if got := sim.Secret(path); got["token"] != "first-join-token" || got["import_url"] != "https://r/x.yaml" {
		t.Fatalf("secret now %v", got)
	}
	if err := a.PutCAS(ctx, path, nil, -1); err == nil {
		t.Error("a negative version was accepted")
	}
}
