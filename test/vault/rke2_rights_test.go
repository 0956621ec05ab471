package vaulttest

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/vault/api"

	"github.com/waldur/site-agent/internal/secret"
)

// TestClusterVaultCheckRightsOnRealVault: the rke2 diagnostics line asks a real Vault what the
// configured token may do. An operator token whose policy grants the rancher-provisioning-*
// and rancher/* globs passes, then does the whole bootstrap with those rights; a token that
// lacks deletes is refused with each missing right named.
func TestClusterVaultCheckRightsOnRealVault(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t)
	if err := c.root.Sys().EnableAuthWithOptions("approle", &api.EnableAuthOptions{Type: "approle"}); err != nil {
		t.Fatal(err)
	}
	c.policy(t, "rke2-operator", `
path "sys/policies/acl/rancher-provisioning-policy-*" { capabilities = ["create", "update", "delete"] }
path "auth/approle/role/rancher-provisioning-role-*"  { capabilities = ["create", "read", "update", "delete"] }
path "secret/data/rancher/*"                          { capabilities = ["create", "read", "update"] }
path "secret/metadata/rancher/*"                      { capabilities = ["delete"] }
`)
	c.policy(t, "rke2-narrow", `
path "sys/policies/acl/*"   { capabilities = ["create", "update"] }
path "auth/approle/role/*"  { capabilities = ["create", "read", "update"] }
path "secret/data/rancher/*" { capabilities = ["create", "read", "update"] }
`)
	op := clusterVault(t, c, c.token(t, "rke2-operator"))
	if check := op.Check(ctx); !check.OK {
		t.Fatalf("operator token: %s", check.Detail)
	}
	const cluster = "fedcba9876543210fedcba9876543210"
	if err := op.Ensure(ctx, cluster, secret.New("registration-token-y")); err != nil {
		t.Fatalf("the rights the check passed are not enough to ensure: %v", err)
	}
	if _, err := op.NodeCredentials(ctx, cluster); err != nil {
		t.Fatalf("node credentials: %v", err)
	}
	if err := op.Remove(ctx, cluster); err != nil {
		t.Fatalf("the rights the check passed are not enough to remove: %v", err)
	}
	narrow := clusterVault(t, c, c.token(t, "rke2-narrow"))
	check := narrow.Check(ctx)
	if check.OK {
		t.Fatalf("a token without deletes passed: %s", check.Detail)
	}
	for _, want := range []string{"delete on sys/policies/acl/rancher-provisioning-policy-", "delete on auth/approle/role/rancher-provisioning-role-",
		"delete on secret/metadata/rancher/cluster-"} {
		if !strings.Contains(check.Detail, want) {
			t.Errorf("detail %q does not name %q", check.Detail, want)
		}
	}
}
