package vaultsim

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/vault/api"

	"github.com/waldur/site-agent/internal/sim/simfault"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func start(t *testing.T) (*Server, *api.Client, *clock) {
	t.Helper()
	clk := &clock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	sim := New("root-token", clk.now)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	cfg := api.DefaultConfig()
	cfg.Address, cfg.MaxRetries = srv.URL, 0
	c, err := api.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.SetToken("root-token")
	return sim, c, clk
}

func status(err error) int {
	var re *api.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

// setup creates what the rke2 backend creates for one cluster.
func setup(t *testing.T, c *api.Client) {
	t.Helper()
	ctx := context.Background()
	pol, _ := json.Marshal(map[string]any{"path": map[string]any{"secret/data/rancher/cluster-u": map[string]any{"capabilities": []string{"read"}}}})
	if err := c.Sys().PutPolicyWithContext(ctx, "rp-u", string(pol)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Logical().WriteWithContext(ctx, "auth/approle/role/rr-u", map[string]any{"token_policies": []string{"rp-u"},
		"secret_id_ttl": "60m", "secret_id_num_uses": 1, "token_num_uses": 1, "token_ttl": "60m", "token_max_ttl": "60m"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Logical().WriteWithContext(ctx, "secret/data/rancher/cluster-u", map[string]any{"data": map[string]any{"token": "reg-token"}}); err != nil {
		t.Fatal(err)
	}
}

func credentials(t *testing.T, c *api.Client) (roleID, secretID string) {
	t.Helper()
	r, err := c.Logical().Read("auth/approle/role/rr-u/role-id")
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Logical().Write("auth/approle/role/rr-u/secret-id", nil)
	if err != nil {
		t.Fatal(err)
	}
	return r.Data["role_id"].(string), s.Data["secret_id"].(string)
}

func TestAppRoleFlow(t *testing.T) {
	_, root, _ := start(t)
	setup(t, root)
	roleID, secretID := credentials(t, root)
	node, _ := root.Clone()
	node.ClearToken()
	login := map[string]any{"role_id": roleID, "secret_id": secretID}
	sec, err := node.Logical().Write("auth/approle/login", login)
	if err != nil || sec.Auth == nil || sec.Auth.ClientToken == "" {
		t.Fatalf("login: %v %+v", err, sec)
	}
	node.SetToken(sec.Auth.ClientToken)
	kv, err := node.Logical().Read("secret/data/rancher/cluster-u")
	if err != nil || kv.Data["data"].(map[string]any)["token"] != "reg-token" {
		t.Fatalf("read token: %v %+v", err, kv)
	}
	if _, err := node.Logical().Read("secret/data/rancher/cluster-u"); status(err) != http.StatusForbidden {
		t.Errorf("a one-use token read twice: %v", err)
	}
	node.ClearToken()
	if _, err := node.Logical().Write("auth/approle/login", login); status(err) != http.StatusBadRequest {
		t.Errorf("a single-use secret id logged in twice: %v", err)
	}
}

func TestPoliciesAreEnforced(t *testing.T) {
	_, root, _ := start(t)
	setup(t, root)
	if _, err := root.Logical().Write("secret/data/rancher/cluster-other", map[string]any{"data": map[string]any{"token": "x"}}); err != nil {
		t.Fatal(err)
	}
	roleID, secretID := credentials(t, root)
	node, _ := root.Clone()
	node.ClearToken()
	sec, err := node.Logical().Write("auth/approle/login", map[string]any{"role_id": roleID, "secret_id": secretID})
	if err != nil {
		t.Fatal(err)
	}
	node.SetToken(sec.Auth.ClientToken)
	if _, err := node.Logical().Read("secret/data/rancher/cluster-other"); status(err) != http.StatusForbidden {
		t.Errorf("read outside the policy: %v", err)
	}
}

func TestSecretIDExpires(t *testing.T) {
	_, root, clk := start(t)
	setup(t, root)
	roleID, secretID := credentials(t, root)
	clk.add(61 * time.Minute)
	root.ClearToken()
	if _, err := root.Logical().Write("auth/approle/login", map[string]any{"role_id": roleID, "secret_id": secretID}); status(err) != http.StatusBadRequest {
		t.Errorf("an expired secret id logged in: %v", err)
	}
}

func TestCleanupAndStrictness(t *testing.T) {
	sim, root, _ := start(t)
	setup(t, root)
	ctx := context.Background()
	roleID, secretID := credentials(t, root)
	if err := root.Sys().DeletePolicyWithContext(ctx, "rp-u"); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Logical().Delete("auth/approle/role/rr-u"); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Logical().Delete("secret/metadata/rancher/cluster-u"); err != nil {
		t.Fatal(err)
	}
	if sim.Policy("rp-u") || sim.Role("approle/rr-u") || sim.Secret("secret/rancher/cluster-u") != nil {
		t.Error("objects left after cleanup")
	}
	if _, err := root.Logical().Write("auth/approle/login", map[string]any{"role_id": roleID, "secret_id": secretID}); status(err) != http.StatusBadRequest {
		t.Errorf("a deleted role's secret id logged in: %v", err)
	}
	cases := map[string]func() error{
		"unknown role field": func() error {
			_, err := root.Logical().Write("auth/approle/role/x", map[string]any{"token_policy": []string{"p"}})
			return err
		},
		"HCL policy": func() error { return root.Sys().PutPolicy("p", `path "x" { capabilities = ["read"] }`) },
		"unknown path": func() error {
			r := root.NewRequest(http.MethodGet, "/v1/sys/nothing")
			resp, err := root.RawRequestWithContext(ctx, r)
			if resp != nil {
				resp.Body.Close()
			}
			return err
		},
		"bad token": func() error {
			bad, _ := root.Clone()
			bad.SetToken("nope")
			_, err := bad.Logical().Read("secret/data/a")
			return err
		},
	}
	for name, f := range cases {
		if err := f(); status(err) < 400 {
			t.Errorf("%s: accepted (%v)", name, err)
		}
	}
}

func TestOpNames(t *testing.T) {
	cases := map[string]string{
		"POST auth/approle/login":                  "login",
		"PUT sys/policies/acl/p":                   "policy.write",
		"DELETE sys/policy/p":                      "policy.delete",
		"POST auth/approle/role/r":                 "approle.role.write",
		"GET auth/approle/role/r/role-id":          "approle.role-id",
		"POST auth/approle/role/r/secret-id":       "approle.secret-id",
		"GET secret/data/rancher/cluster-u":        "kv.read",
		"POST secret/data/rancher/cluster-u":       "kv.write",
		"DELETE secret/metadata/rancher/cluster-u": "kv.delete",
		"GET sys/internal/ui/mounts/secret/x":      "sys.mounts",
		"GET sys/auth":                             "sys.auth",
		"GET auth/token/lookup-self":               "token.lookup-self",
	}
	for req, want := range cases {
		method, path, _ := strings.Cut(req, " ")
		if got := opName(method, path); got != want {
			t.Errorf("%s: %s, want %s", req, got, want)
		}
	}
}

// TestLostResponseIsApplied: a secret id whose answer is lost was issued all the same, and a
// status fault applies nothing.
func TestFaultsApplyOrNot(t *testing.T) {
	sim, root, _ := start(t)
	setup(t, root)
	sim.FailNext("approle.secret-id", 1, simfault.LoseResponse)
	if _, err := root.Logical().Write("auth/approle/role/rr-u/secret-id", nil); err == nil {
		t.Fatal("a lost response reached the client")
	}
	sim.mu.Lock()
	issued := len(sim.secrets)
	sim.mu.Unlock()
	if issued != 1 {
		t.Errorf("%d secret ids after a lost response, want 1", issued)
	}
	sim.FailNext("policy.write", 1, simfault.Status503)
	if err := root.Sys().PutPolicy("other", `{"path": {"x": {"capabilities": ["read"]}}}`); err == nil {
		t.Fatal("a 503 reached the client as success")
	}
	if sim.Policy("other") {
		t.Error("a 503 applied the write")
	}
}

// TestKVCheckAndSet: options.cas as KV v2 applies it — 0 writes only a secret that does not
// exist, n only over version n; anything else is 400 and changes nothing.
func TestKVCheckAndSet(t *testing.T) {
	sim, c, _ := start(t)
	write := func(cas any, v string) error {
		_, err := c.Logical().Write("secret/data/rancher/cluster-u", map[string]any{"data": map[string]any{"token": v}, "options": map[string]any{"cas": cas}})
		return err
	}
	if err := write(0, "first"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cas  any
		want string
	}{{0, "did not match"}, {2, "did not match"}, {-1, "invalid cas"}, {"1", "invalid cas"}} {
		if err := write(tc.cas, "second"); status(err) != 400 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("cas %v: %v, want 400 %q", tc.cas, err, tc.want)
		}
	}
	if err := write(1, "second"); err != nil {
		t.Fatal(err)
	}
	if got := sim.Secret("secret/rancher/cluster-u")["token"]; got != "second" {
		t.Errorf("token %v after cas 1", got)
	}
	if _, err := c.Logical().Delete("secret/metadata/rancher/cluster-u"); err != nil {
		t.Fatal(err)
	}
	if err := write(0, "third"); err != nil {
		t.Errorf("cas 0 after the metadata was deleted: %v", err)
	}
}
