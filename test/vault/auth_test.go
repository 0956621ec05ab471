package vaulttest

import (
	"context"
	"strings"
	"testing"
	"time"

	sv "github.com/waldur/site-agent/internal/clients/vault"
	"github.com/waldur/site-agent/internal/failure"
)

// TestAuthMethodsResolveReferences logs in with each method against the real core and
// resolves references from the KV v2 and KV v1 mounts.
func TestAuthMethodsResolveReferences(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	c.put(t, "secret/site/rancher", map[string]any{"password": "rancher-pass-1234", "user": "agent"})
	c.put(t, "kv1/waldur", map[string]any{"token": "waldur-token-5678"})
	roleID, secretID := c.appRole(t, "site-agent", nil)
	kube := newKubeReviewer(t, "waldur", "site-agent")
	c.kubernetesAuth(t, kube.url, "site-agent", "waldur")
	cases := []struct {
		name string
		auth map[string]any
	}{
		{"token", map[string]any{"method": "token", "token": c.token(t, "site-agent")}},
		{"approle", map[string]any{"method": "approle", "role_id": roleID, "secret_id": secretID}},
		{"approle secret_id_file", map[string]any{"method": "approle", "role_id": roleID, "secret_id_file": writeFile(t, secretID+"\n")}},
		{"kubernetes", map[string]any{"method": "kubernetes", "role": "site-agent", "jwt_file": writeFile(t, kube.jwt)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := sv.NewResolver(c.section(tc.auth))
			if err != nil {
				t.Fatal(err)
			}
			for ref, want := range map[string]string{
				"vault:secret/site/rancher#password": "rancher-pass-1234",
				"vault:secret/site/rancher#user":     "agent",
				"vault:kv1/waldur#token":             "waldur-token-5678",
			} {
				got, err := r.Resolve(context.Background(), ref)
				if err != nil || got != want {
					t.Fatalf("%s: got %q, %v", ref, got, err)
				}
			}
		})
	}
	if kube.reviews() == 0 {
		t.Fatal("kubernetes login never reached the token review endpoint")
	}
}

// TestErrorsNameTheProblemNotTheSecret checks the messages an operator sees for each kind of
// failure against the real core: none may contain a token, secret id or secret value.
func TestErrorsNameTheProblemNotTheSecret(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	c.put(t, "secret/site/rancher", map[string]any{"password": "rancher-pass-1234"})
	c.put(t, "secret/other/db", map[string]any{"password": "other-pass-9999"})
	token := c.token(t, "site-agent")
	roleID, secretID := c.appRole(t, "site-agent", nil)
	kube := newKubeReviewer(t, "waldur", "site-agent")
	c.kubernetesAuth(t, kube.url, "site-agent", "waldur")
	tokenAuth := map[string]any{"method": "token", "token": token}
	cases := []struct {
		name, ref string
		auth      map[string]any
		want      string
	}{
		{"missing key", "vault:secret/site/rancher#user", tokenAuth, `key "user" missing in secret secret/site/rancher (its keys: password)`},
		{"missing secret", "vault:secret/site/absent#password", tokenAuth, "secret secret/site/absent not found (KV v2 mount secret/)"},
		{"policy denies the path", "vault:secret/other/db#password", tokenAuth, "reading secret/other/db (KV v2 mount secret/): permission denied"},
		{"no such mount", "vault:nowhere/x#k", tokenAuth, "looking up the mount of nowhere/x: permission denied"},
		{"revoked token", "vault:secret/site/rancher#password", map[string]any{"method": "token", "token": "hvs.revoked-or-never-issued"}, "permission denied"},
		{"wrong secret id", "vault:secret/site/rancher#password", map[string]any{"method": "approle", "role_id": roleID, "secret_id": "0000-wrong-" + secretID[11:]},
			"vault login (approle at auth/approle): HTTP 400: invalid role or secret ID"},
		{"unknown kubernetes role", "vault:secret/site/rancher#password", map[string]any{"method": "kubernetes", "role": "nobody", "jwt_file": writeFile(t, kube.jwt)},
			`vault login (kubernetes at auth/kubernetes): HTTP 400: invalid role name "nobody"`},
		{"kubernetes token rejected", "vault:secret/site/rancher#password", map[string]any{"method": "kubernetes", "role": "site-agent", "jwt_file": writeFile(t, kube.otherJWT)},
			"vault login (kubernetes at auth/kubernetes): permission denied"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := sv.NewResolver(c.section(tc.auth))
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Resolve(context.Background(), tc.ref)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %q", err, tc.want)
			}
			if failure.IsTransient(err) {
				t.Fatalf("a permanent problem marked transient: %v", err)
			}
			t.Logf("message: %v", err)
			for _, s := range []string{token, secretID, kube.jwt, kube.otherJWT, "rancher-pass-1234", "other-pass-9999", "hvs.revoked-or-never-issued"} {
				if strings.Contains(err.Error(), s) {
					t.Fatalf("error reveals a secret: %v", err)
				}
			}
		})
	}
}

// TestTokenRenewalAndRelogin uses roles with short TTLs: the store must renew its token past
// the first TTL without logging in again, log in again once the maximum TTL is reached, and
// say clearly when it cannot.
func TestTokenRenewalAndRelogin(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	c.put(t, "secret/tenants/t1", map[string]any{"password": "tenant-pass-1"})
	ctx := context.Background()
	run := func(t *testing.T, st *sv.Store, steps int, pause time.Duration) error {
		for i := 0; i < steps; i++ {
			if i > 0 {
				time.Sleep(pause)
			}
			if _, err := st.Get(ctx, "secret/tenants/t1"); err != nil {
				return err
			}
		}
		return nil
	}
	newStore := func(t *testing.T, roleID, secretID string) *sv.Store {
		st, err := sv.NewStore(c.section(map[string]any{"method": "approle", "role_id": roleID, "secret_id": secretID}))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	t.Run("renewed beyond its TTL with one login", func(t *testing.T) {
		roleID, secretID := c.appRole(t, "renewable", map[string]any{"token_ttl": "4s", "token_max_ttl": "60s", "secret_id_num_uses": 5})
		if err := run(t, newStore(t, roleID, secretID), 4, 3*time.Second); err != nil { // 9 s > 2 × TTL
			t.Fatal(err)
		}
		if left := c.secretIDUsesLeft(t, "renewable", secretID); left != 4 {
			t.Fatalf("%d logins, want 1 (renewal instead of login)", 5-left)
		}
	})
	t.Run("new login after the max TTL", func(t *testing.T) {
		roleID, secretID := c.appRole(t, "capped", map[string]any{"token_ttl": "2s", "token_max_ttl": "2s", "secret_id_num_uses": 5})
		if err := run(t, newStore(t, roleID, secretID), 3, 2500*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if left := c.secretIDUsesLeft(t, "capped", secretID); left != 2 {
			t.Fatalf("%d logins, want 3 (one per expired token)", 5-left)
		}
	})
	t.Run("login impossible once the secret id is used up", func(t *testing.T) {
		roleID, secretID := c.appRole(t, "single", map[string]any{"token_ttl": "2s", "token_max_ttl": "2s", "secret_id_num_uses": 1})
		err := run(t, newStore(t, roleID, secretID), 2, 2500*time.Millisecond)
		if err == nil || !strings.Contains(err.Error(), "vault login (approle at auth/approle): HTTP 400: invalid role or secret ID") ||
			strings.Contains(err.Error(), secretID) {
			t.Fatalf("got %v", err)
		}
	})
}
