package rke2

import (
	"context"
	"fmt"
	"strings"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
)

// memSecret is one cluster's Vault objects in the in-memory world.
type memSecret struct {
	access bool              // policy and AppRole exist
	data   map[string]string // the KV secret; nil: none
	made   int               // join tokens generated for the cluster
}

type memVault struct{ w *memWorld }

func (w *memWorld) vaultOf(cluster string) *memSecret {
	if w.vault[cluster] == nil {
		w.vault[cluster] = &memSecret{}
	}
	return w.vault[cluster]
}

func (m memVault) Ensure(_ context.Context, cluster string, token secret.Secret) error {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("VaultEnsure"); err != nil {
		return err
	}
	v := w.vaultOf(cluster)
	v.access, v.data = true, map[string]string{SecretKeyToken: token.Reveal()}
	return nil
}

func (m memVault) EnsureJoin(_ context.Context, cluster string, js JoinSecret, mayCreate bool) error {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("VaultEnsureJoin"); err != nil {
		return err
	}
	v := w.vaultOf(cluster)
	v.access = true
	if v.data == nil {
		if !mayCreate {
			return failure.Errorf("join token of %s missing", cluster)
		}
		w.seq++
		v.made++
		v.data = map[string]string{SecretKeyToken: fmt.Sprintf("join-token-%06d", w.seq)}
	}
	v.data[SecretKeyImportURL], v.data[SecretKeyRegistries] = js.ImportURL.Reveal(), js.Registries.Reveal()
	return nil
}

func (m memVault) NodeCredentials(_ context.Context, cluster string) (VaultCredentials, error) {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("VaultSecretID"); err != nil {
		return VaultCredentials{}, err
	}
	if v := w.vault[cluster]; v == nil || !v.access {
		return VaultCredentials{}, fmt.Errorf("approle for %s: %w", cluster, failure.ErrNotFound)
	}
	w.seq++
	sid := fmt.Sprintf("sid-%06d-single-use", w.seq)
	w.sids[sid] = true
	return VaultCredentials{RoleID: "role-" + cluster[:8], SecretID: secret.New(sid)}, nil
}

func (m memVault) RemoveAccess(_ context.Context, cluster string) error {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("VaultRemoveAccess"); err != nil {
		return err
	}
	if v := w.vault[cluster]; v != nil {
		v.access = false
		if v.data == nil {
			delete(w.vault, cluster)
		}
	}
	return nil
}

func (m memVault) Remove(_ context.Context, cluster string) error {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("VaultRemove"); err != nil {
		return err
	}
	delete(w.vault, cluster)
	return nil
}

func (m memVault) Check(context.Context) backends.Check {
	return backends.Check{Name: "vault approle", OK: true, Detail: "in memory"}
}

// readToken records the token a booting node read (w.mu held).
func (w *memWorld) readToken(cluster, token string) {
	if w.tokensRead[cluster] == nil {
		w.tokensRead[cluster] = map[string]int{}
	}
	w.tokensRead[cluster][token]++
}

// checkNoVaultData asserts the user data carries none of what the cluster's secret holds (w.mu held).
func (w *memWorld) checkNoVaultData(req ServerRequest) {
	v := w.vault[req.Inventory.Cluster]
	if v == nil {
		return
	}
	for k, val := range v.data {
		if val != "" && strings.Contains(string(req.UserData.Bytes()), val) {
			w.t.Fatalf("the user data of %s contains the vault secret's %s", req.Name, k)
		}
	}
}
