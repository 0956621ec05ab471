package rke2

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/waldur/site-agent/internal/backends"
)

// probeCluster names the objects whose paths the rights check asks about: the token's
// policies are usually written for a glob such as rancher-provisioning-*, so any cluster's
// names answer for all of them.
const probeCluster = "00000000000000000000000000000000"

// need is a path and the capabilities the backend uses on it.
type need struct {
	path string
	caps []string
}

// needs lists every path the backend writes, reads or deletes for a cluster.
func (v *ClusterVault) needs() []need {
	role := "auth/" + v.approleMount + "/role/" + VaultRoleName(probeCluster)
	return []need{
		{"sys/policies/acl/" + VaultPolicyName(probeCluster), []string{"create", "update", "delete"}},
		{role, []string{"create", "update", "delete"}},
		{role + "/role-id", []string{"read"}},
		{role + "/secret-id", []string{"update"}},
		{v.kvMount + "/data/" + VaultSecretPath(probeCluster), []string{"create", "update", "read"}},
		{v.kvMount + "/metadata/" + VaultSecretPath(probeCluster), []string{"delete"}},
	}
}

// Check is the diagnostics line: the AppRole auth method is enabled at the configured mount,
// and the token may manage the cluster policies, AppRoles and token secrets (asked of Vault
// with sys/capabilities-self; missing rights are named path by path).
func (v *ClusterVault) Check(ctx context.Context) backends.Check {
	c := backends.Check{Name: "vault approle"}
	typ, visible, err := v.admin.AuthMount(ctx, v.approleMount)
	switch {
	case err != nil:
		c.Detail = err.Error()
		return c
	case !visible:
		c.Detail = fmt.Sprintf("no AppRole auth method at auth/%s, or the vault_token may do nothing under it (vault auth enable -path=%s approle)",
			v.approleMount, v.approleMount)
		return c
	case typ != "approle":
		c.Detail = fmt.Sprintf("auth/%s is a %s auth method, not AppRole", v.approleMount, typ)
		return c
	}
	var missing []string
	for _, n := range v.needs() {
		have, err := v.admin.Capabilities(ctx, n.path)
		if err != nil {
			c.Detail = err.Error()
			return c
		}
		if lack := lacking(have, n.caps); len(lack) > 0 {
			missing = append(missing, strings.Join(lack, ", ")+" on "+n.path)
		}
	}
	if len(missing) > 0 {
		c.Detail = "the vault_token may not: " + strings.Join(missing, "; ")
		return c
	}
	c.OK, c.Detail = true, fmt.Sprintf("AppRole auth method at auth/%s; the token may manage cluster policies, AppRoles and %s/%s",
		v.approleMount, v.kvMount, VaultSecretPath("<uuid>"))
	return c
}

// lacking is what of want have does not grant ("root" grants everything, "deny" nothing).
func lacking(have, want []string) []string {
	if slices.Contains(have, "root") {
		return nil
	}
	if slices.Contains(have, "deny") {
		return want
	}
	var out []string
	for _, w := range want {
		if !slices.Contains(have, w) {
			out = append(out, w)
		}
	}
	return out
}
