// Command vaultserver serves a real Vault core (vault.NewTestCluster: Vault's own in-process
// test cluster, one core, TLS on a loopback port with its own CA) for the end-to-end tests of
// the main module, which cannot link Vault's server code (BUSL-1.1, test-only). The core has
// KV v2 mounted at secret/ (writable when the address is printed) and AppRole enabled at
// approle/. It prints one JSON line on stdout — {"addr", "ca_file", "root_token"} — and writes
// the same to -info when given, then serves until SIGTERM or SIGINT, or until its stdin is
// closed (the test that started it is gone). Build it with scripts/vault/server.sh.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	kv "github.com/hashicorp/vault-plugin-secrets-kv"
	"github.com/hashicorp/vault/api"
	"github.com/hashicorp/vault/builtin/credential/approle"
	"github.com/hashicorp/vault/helper/testhelpers/corehelpers"
	vaulthttp "github.com/hashicorp/vault/http"
	"github.com/hashicorp/vault/sdk/logical"
	"github.com/hashicorp/vault/vault"
)

// Info is what the server prints once it is ready.
type Info struct {
	Addr      string `json:"addr"`       // https://127.0.0.1:PORT
	CAFile    string `json:"ca_file"`    // PEM of the CA of the server's certificate
	RootToken string `json:"root_token"` // the core's root token
}

func main() {
	infoFile := flag.String("info", "", "also write the JSON line to this file")
	flag.Parse()
	t := newTB()
	info, err := start(t)
	if err != nil {
		t.Fatalf("%v", err)
	}
	line, _ := json.Marshal(info)
	if *infoFile != "" {
		if err := os.WriteFile(*infoFile, append(line, '\n'), 0o600); err != nil {
			t.Fatalf("%v", err)
		}
	}
	fmt.Println(string(line))
	wait()
	t.cleanup()
}

// start starts the core with the kv and approle plugins, mounts KV v2 at secret/ and enables
// AppRole at approle/.
func start(t *tb) (Info, error) {
	conf := &vault.CoreConfig{
		LogicalBackends:    map[string]logical.Factory{"kv": kv.Factory},
		CredentialBackends: map[string]logical.Factory{"approle": approle.Factory},
		BuiltinRegistry:    corehelpers.NewMockBuiltinRegistry(),
	}
	vc := vault.NewTestCluster(t, conf, &vault.TestClusterOptions{NumCores: 1, HandlerFunc: vaulthttp.Handler, Logger: hclog.NewNullLogger()})
	vc.Start()
	t.Cleanup(vc.Cleanup)
	core := vc.Cores[0]
	vault.TestWaitActive(t, core.Core)
	root := core.Client
	info := Info{Addr: root.Address(), CAFile: filepath.Join(t.TempDir(), "vault-ca.pem"), RootToken: root.Token()}
	if err := os.WriteFile(info.CAFile, vc.CACertPEM, 0o600); err != nil {
		return info, err
	}
	if err := root.Sys().EnableAuthWithOptions("approle", &api.EnableAuthOptions{Type: "approle"}); err != nil {
		return info, fmt.Errorf("enable approle: %w", err)
	}
	_ = root.Sys().Unmount("secret") // the test cluster may mount a KV v1 there
	if err := root.Sys().Mount("secret", &api.MountInput{Type: "kv", Options: map[string]string{"version": "2"}}); err != nil {
		return info, fmt.Errorf("mount secret/: %w", err)
	}
	return info, kvReady(root)
}

// kvReady waits until the fresh KV v2 mount has upgraded its storage and takes writes.
func kvReady(root *api.Client) error {
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := root.KVv2("secret").Put(ctx, "probe", map[string]any{"ok": "1"})
		if err == nil {
			return root.KVv2("secret").DeleteMetadata(ctx, "probe")
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kv v2 at secret/ never became writable: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// wait returns on SIGTERM or SIGINT, or once stdin is closed.
func wait() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	select {
	case <-sig:
	case <-eof:
	}
}
