package rke2

import (
	"context"
	"strings"
	"testing"
)

// TestClusterVaultCheckRights: diagnostics asks Vault what the configured token may do on
// every path the backend uses and names what is missing; the root token and an operator token
// whose policy grants the rancher-provisioning-* globs pass.
func TestClusterVaultCheckRights(t *testing.T) {
	operator := map[string][]string{
		"sys/policies/acl/rancher-provisioning-policy-*": {"create", "update", "delete"},
		"auth/approle/role/rancher-provisioning-role-*":  {"create", "read", "update", "delete"},
		"secret/data/rancher/*":                          {"create", "read", "update"},
		"secret/metadata/rancher/*":                      {"delete"},
	}
	narrow := map[string][]string{
		"sys/policies/acl/*":    {"create", "update", "delete"},
		"auth/approle/role/*":   {"create", "read", "update"},
		"secret/data/rancher/*": {"read"},
	}
	cases := []struct {
		name, token string
		want        []string // substrings of the detail; none for a pass
	}{
		{"root", "", nil},
		{"operator", "hvs.operator", nil},
		{"narrow", "hvs.narrow", []string{"delete on auth/approle/role/rancher-provisioning-role-",
			"create, update on secret/data/rancher/cluster-", "delete on secret/metadata/rancher/cluster-"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var kv []any
			if tc.token != "" {
				kv = []any{"vault_token", tc.token}
			}
			s, sim, _ := vaultWorld(t, kv...)
			sim.SetPolicy("operator", operator)
			sim.SetPolicy("narrow", narrow)
			sim.AddToken("hvs.operator", "operator")
			sim.AddToken("hvs.narrow", "narrow")
			cv, err := flatClusterVault(s)
			if err != nil {
				t.Fatal(err)
			}
			c := cv.Check(context.Background())
			if len(tc.want) == 0 {
				if !c.OK {
					t.Fatalf("check failed: %s", c.Detail)
				}
				return
			}
			if c.OK {
				t.Fatalf("check passed for a token without the rights: %s", c.Detail)
			}
			for _, w := range tc.want {
				if !strings.Contains(c.Detail, w) {
					t.Errorf("detail %q does not name %q", c.Detail, w)
				}
			}
			if strings.Contains(c.Detail, tc.token) {
				t.Errorf("the detail shows the token: %s", c.Detail)
			}
		})
	}
}
