package rke2

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/waldur/site-agent/internal/clients/vault"
	"github.com/waldur/site-agent/internal/secret"
)

// ClusterVault keeps a cluster's bootstrap objects in Vault (spec/rancher.md §5.3): a policy
// that may read one KV v2 secret, an AppRole whose secret ids and tokens are single use and
// live 60 minutes, and the secret holding the cluster's token (Rancher registration token, or
// with bootstrap rke2 the join token and what servers need: joinsecret.go). Every VM gets the
// role id and a fresh secret id.
type ClusterVault struct {
	admin        *vault.Admin
	kvMount      string
	approleMount string

	mu sync.Mutex
	// roleIDs are the AppRoles' role ids read since this process last wrote or removed them,
	// by cluster: a role keeps its id until it is deleted, so its nodes need one read.
	roleIDs map[string]string
}

// bootstrapTTL bounds secret ids and the tokens they log in to.
const bootstrapTTL = "60m"

// NewClusterVault keeps the clusters' objects in admin's Vault (Settings.ConnectVault) under the
// settings' KV and AppRole mounts.
func NewClusterVault(admin *vault.Admin, s *Settings) *ClusterVault {
	return &ClusterVault{admin: admin, kvMount: s.VaultKVMount, approleMount: s.VaultAppRoleMount, roleIDs: map[string]string{}}
}

func (v *ClusterVault) secretPath(cluster string) string {
	return v.kvMount + "/" + VaultSecretPath(cluster)
}

// Ensure (bootstrap rancher) writes the cluster's policy, AppRole and token secret holding the
// registration token (idempotent: each is replaced).
func (v *ClusterVault) Ensure(ctx context.Context, cluster string, token secret.Secret) error {
	if err := v.ensureAccess(ctx, cluster); err != nil {
		return err
	}
	return v.admin.Put(ctx, v.secretPath(cluster), map[string]string{SecretKeyToken: token.Reveal()})
}

// ensureAccess writes the policy that may read the cluster's secret and the AppRole that grants it.
func (v *ClusterVault) ensureAccess(ctx context.Context, cluster string) error {
	if !clusterIDRe.get().MatchString(cluster) {
		return fmt.Errorf("vault objects for cluster %q: want the resource UUID as 32 hex digits", cluster)
	}
	rules, _ := json.Marshal(map[string]any{"path": map[string]any{
		v.kvMount + "/data/" + VaultSecretPath(cluster): map[string]any{"capabilities": []string{"read"}}}})
	if err := v.admin.PutPolicy(ctx, VaultPolicyName(cluster), string(rules)); err != nil {
		return err
	}
	role := vault.AppRole{TokenPolicies: []string{VaultPolicyName(cluster)}, SecretIDTTL: bootstrapTTL, SecretIDNumUses: 1,
		TokenNumUses: 1, TokenTTL: bootstrapTTL, TokenMaxTTL: bootstrapTTL}
	v.forgetRoleID(cluster) // the role may have been made anew, with a new id
	return v.admin.PutAppRole(ctx, v.approleMount, VaultRoleName(cluster), role)
}

// roleID is the cluster's AppRole's role id, read once while the role stands.
func (v *ClusterVault) roleID(ctx context.Context, cluster string) (string, error) {
	v.mu.Lock()
	id, ok := v.roleIDs[cluster]
	v.mu.Unlock()
	if ok {
		return id, nil
	}
	id, err := v.admin.RoleID(ctx, v.approleMount, VaultRoleName(cluster))
	if err != nil {
		return "", err
	}
	v.mu.Lock()
	v.roleIDs[cluster] = id
	v.mu.Unlock()
	return id, nil
}

func (v *ClusterVault) forgetRoleID(cluster string) {
	v.mu.Lock()
	delete(v.roleIDs, cluster)
	v.mu.Unlock()
}

// NodeCredentials returns the role id and a fresh single-use secret id for one VM. The caller
// puts them into the VM's cloud-init and Forgets the secret id once the VM is created.
func (v *ClusterVault) NodeCredentials(ctx context.Context, cluster string) (VaultCredentials, error) {
	roleID, err := v.roleID(ctx, cluster)
	if err != nil {
		return VaultCredentials{}, err
	}
	sid, err := v.admin.NewSecretID(ctx, v.approleMount, VaultRoleName(cluster))
	if err != nil {
		v.forgetRoleID(cluster) // the role may be gone
		return VaultCredentials{}, err
	}
	return VaultCredentials{RoleID: roleID, SecretID: sid}, nil
}

// Remove deletes the cluster's AppRole (and its secret ids), policy and token secret (every
// version); absent objects are fine, so it can run on every pass after the nodes registered.
func (v *ClusterVault) Remove(ctx context.Context, cluster string) error {
	if err := v.RemoveAccess(ctx, cluster); err != nil {
		return err
	}
	return v.admin.Delete(ctx, v.secretPath(cluster))
}

// RemoveAccess deletes the AppRole (and its secret ids) and the policy, keeping the secret: with
// bootstrap rke2 it holds the join token for the cluster's whole life.
func (v *ClusterVault) RemoveAccess(ctx context.Context, cluster string) error {
	v.forgetRoleID(cluster)
	if err := v.admin.DeleteAppRole(ctx, v.approleMount, VaultRoleName(cluster)); err != nil {
		return err
	}
	return v.admin.DeletePolicy(ctx, VaultPolicyName(cluster))
}
