package vaulttest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/backends"
	sv "github.com/waldur/site-agent/internal/clients/vault"
	"github.com/waldur/site-agent/internal/failure"
)

// TestStoreOnKV2AndKV1 runs the SecretStore contract against both KV versions with an AppRole
// token limited by the site-agent policy.
func TestStoreOnKV2AndKV1(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	roleID, secretID := c.appRole(t, "site-agent", nil)
	st, err := sv.NewStore(c.section(map[string]any{"method": "approle", "role_id": roleID, "secret_id": secretID}))
	if err != nil {
		t.Fatal(err)
	}
	var _ backends.SecretStore = st
	ctx := context.Background()
	for _, path := range []string{"secret/tenants/t1", "kv1/tenants/t1"} {
		t.Run(path, func(t *testing.T) {
			if _, err := st.Get(ctx, path); !errors.Is(err, failure.ErrNotFound) {
				t.Fatalf("absent secret: %v", err)
			}
			first := map[string]string{"username": "t1-admin", "password": "first-pass-0001"}
			second := map[string]string{"username": "t1-admin", "password": "second-pass-0002"}
			for _, want := range []map[string]string{first, second} {
				if err := st.Put(ctx, path, want); err != nil {
					t.Fatal(err)
				}
				got, err := st.Get(ctx, path)
				if err != nil || len(got) != 2 || got["password"] != want["password"] || got["username"] != "t1-admin" {
					t.Fatalf("get after put: %v, %v", got, err)
				}
			}
			for i := 0; i < 2; i++ { // the second delete finds nothing, which is fine
				if err := st.Delete(ctx, path); err != nil {
					t.Fatalf("delete %d: %v", i, err)
				}
			}
			if _, err := st.Get(ctx, path); !errors.Is(err, failure.ErrNotFound) {
				t.Fatalf("after delete: %v", err)
			}
		})
	}
	// KV v2 delete removes every version and the metadata, not only the latest version.
	if sec, err := c.root.Logical().Read("secret/metadata/tenants/t1"); err != nil || sec != nil {
		t.Fatalf("metadata left behind: %v, %v", sec, err)
	}
	t.Run("policy forbids the path", func(t *testing.T) {
		err := st.Put(ctx, "secret/site/rancher", map[string]string{"password": "overwrite-attempt-1"})
		if err == nil || !strings.Contains(err.Error(), "writing secret/site/rancher (KV v2 mount secret/): permission denied") ||
			failure.IsTransient(err) || strings.Contains(err.Error(), "overwrite-attempt-1") {
			t.Fatalf("got %v", err)
		}
	})
}

// TestMountWithSlashes resolves a secret on a mount whose path has two segments: the mount is
// what Vault says, not the first segment.
func TestMountWithSlashes(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	c.mountKV(t, "team/kv", "2")
	if _, err := c.root.KVv2("team/kv").Put(context.Background(), "site/rancher", map[string]any{"password": "team-pass-4321"}); err != nil {
		t.Fatal(err)
	}
	c.mountKV(t, "team/old", "1")
	if err := c.root.KVv1("team/old").Put(context.Background(), "site/rancher", map[string]any{"password": "old-pass-8765"}); err != nil {
		t.Fatal(err)
	}
	r, err := sv.NewResolver(c.section(map[string]any{"method": "token", "token": c.root.Token()}))
	if err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]string{"vault:team/kv/site/rancher#password": "team-pass-4321", "vault:team/old/site/rancher#password": "old-pass-8765"} {
		got, err := r.Resolve(context.Background(), ref)
		if err != nil || got != want {
			t.Fatalf("%s: got %q, %v", ref, got, err)
		}
	}
}
