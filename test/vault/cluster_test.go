package vaulttest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	kubeauth "github.com/hashicorp/vault-plugin-auth-kubernetes"
	kv "github.com/hashicorp/vault-plugin-secrets-kv"
	"github.com/hashicorp/vault/api"
	"github.com/hashicorp/vault/builtin/credential/approle"
	"github.com/hashicorp/vault/helper/testhelpers/corehelpers"
	vaulthttp "github.com/hashicorp/vault/http"
	"github.com/hashicorp/vault/sdk/logical"
	"github.com/hashicorp/vault/vault"
)

// cluster is one in-process Vault core on loopback with its own TLS CA.
type cluster struct {
	addr   string      // https://127.0.0.1:PORT
	caFile string      // PEM file of the cluster's CA
	root   *api.Client // root token client
}

// startCluster starts a single Vault core with the kv, approle and kubernetes plugins, mounts
// KV v2 at "secret" and KV v1 at "kv1", and stops it when the test ends.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	started := time.Now()
	conf := &vault.CoreConfig{
		LogicalBackends:    map[string]logical.Factory{"kv": kv.Factory},
		CredentialBackends: map[string]logical.Factory{"approle": approle.Factory, "kubernetes": kubeauth.Factory},
		BuiltinRegistry:    corehelpers.NewMockBuiltinRegistry(),
	}
	vc := vault.NewTestCluster(t, conf, &vault.TestClusterOptions{
		NumCores: 1, HandlerFunc: vaulthttp.Handler, Logger: hclog.NewNullLogger(),
	})
	vc.Start()
	t.Cleanup(vc.Cleanup)
	core := vc.Cores[0]
	vault.TestWaitActive(t, core.Core)
	c := &cluster{addr: core.Client.Address(), root: core.Client, caFile: filepath.Join(t.TempDir(), "vault-ca.pem")}
	if err := os.WriteFile(c.caFile, vc.CACertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	c.mountKV(t, "secret", "2")
	c.mountKV(t, "kv1", "1")
	c.policy(t, "site-agent", `
path "secret/data/site/*"      { capabilities = ["read"] }
path "secret/data/tenants/*"   { capabilities = ["create", "update", "read"] }
path "secret/metadata/tenants/*" { capabilities = ["delete"] }
path "kv1/*"                   { capabilities = ["create", "update", "read", "delete"] }
`)
	t.Logf("vault core ready at %s in %s", c.addr, time.Since(started).Round(time.Millisecond))
	return c
}

// mountKV mounts a KV engine at path (replacing one already there). A fresh KV v2 mount
// upgrades its storage in the background: the first write is retried until it is done.
func (c *cluster) mountKV(t *testing.T, path, version string) {
	t.Helper()
	sys := c.root.Sys()
	mounts, err := sys.ListMounts()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := mounts[path+"/"]; ok {
		if err := sys.Unmount(path); err != nil {
			t.Fatalf("unmount %s: %v", path, err)
		}
	}
	if err := sys.Mount(path, &api.MountInput{Type: "kv", Options: map[string]string{"version": version}}); err != nil {
		t.Fatalf("mount %s: %v", path, err)
	}
	if version != "2" {
		return
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := c.root.KVv2(path).Put(context.Background(), "probe", map[string]any{"ok": "1"})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kv v2 mount %s never became writable: %v", path, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := c.root.KVv2(path).DeleteMetadata(context.Background(), "probe"); err != nil {
		t.Fatal(err)
	}
}

func (c *cluster) policy(t *testing.T, name, hcl string) {
	t.Helper()
	if err := c.root.Sys().PutPolicy(name, hcl); err != nil {
		t.Fatalf("policy %s: %v", name, err)
	}
}

// put writes a secret with the root token: path is "<mount>/<path>" on secret (v2) or kv1 (v1).
func (c *cluster) put(t *testing.T, path string, data map[string]any) {
	t.Helper()
	mount, rel, _ := strings.Cut(path, "/")
	var err error
	if mount == "kv1" {
		err = c.root.KVv1(mount).Put(context.Background(), rel, data)
	} else {
		_, err = c.root.KVv2(mount).Put(context.Background(), rel, data)
	}
	if err != nil {
		t.Fatalf("put %s: %v", path, err)
	}
}

// token creates a token with the given policies.
func (c *cluster) token(t *testing.T, policies ...string) string {
	t.Helper()
	sec, err := c.root.Auth().Token().Create(&api.TokenCreateRequest{Policies: policies, TTL: "1h", NoDefaultPolicy: false})
	if err != nil {
		t.Fatal(err)
	}
	return sec.Auth.ClientToken
}

// write is a root-token logical write that must succeed.
func (c *cluster) write(t *testing.T, path string, data map[string]any) *api.Secret {
	t.Helper()
	sec, err := c.root.Logical().Write(path, data)
	if err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
	return sec
}

// appRole enables AppRole (once) and creates a role with the site-agent policy; it returns the
// role id and a new secret id.
func (c *cluster) appRole(t *testing.T, role string, roleOpts map[string]any) (roleID, secretID string) {
	t.Helper()
	auths, err := c.root.Sys().ListAuth()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := auths["approle/"]; !ok {
		if err := c.root.Sys().EnableAuthWithOptions("approle", &api.EnableAuthOptions{Type: "approle"}); err != nil {
			t.Fatal(err)
		}
	}
	opts := map[string]any{"token_policies": "site-agent"}
	for k, v := range roleOpts {
		opts[k] = v
	}
	c.write(t, "auth/approle/role/"+role, opts)
	sec, err := c.root.Logical().Read("auth/approle/role/" + role + "/role-id")
	if err != nil {
		t.Fatal(err)
	}
	sid := c.write(t, "auth/approle/role/"+role+"/secret-id", nil)
	return sec.Data["role_id"].(string), sid.Data["secret_id"].(string)
}

// secretIDUsesLeft reports how many logins a limited secret id still allows.
func (c *cluster) secretIDUsesLeft(t *testing.T, role, secretID string) int {
	t.Helper()
	sec := c.write(t, "auth/approle/role/"+role+"/secret-id/lookup", map[string]any{"secret_id": secretID})
	n, err := sec.Data["secret_id_num_uses"].(interface{ Int64() (int64, error) }).Int64()
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// section is a vault section for this cluster with the given auth mapping.
func (c *cluster) section(auth map[string]any) map[string]any {
	return map[string]any{"address": c.addr, "ca_cert": c.caFile, "max_retries": 1, "auth": auth}
}
