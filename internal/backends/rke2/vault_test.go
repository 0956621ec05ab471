package rke2

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/nodeemu"
	"github.com/waldur/site-agent/internal/sim/simfault"
	"github.com/waldur/site-agent/internal/sim/vaultsim"
	"github.com/waldur/site-agent/internal/upstream"
)

// flatClusterVault is the ClusterVault of settings that name Vault with the (deprecated) flat
// keys.
func flatClusterVault(s *Settings) (*ClusterVault, error) {
	a, _, err := s.ConnectVault(nil, upstream.Settings{})
	if err != nil {
		return nil, err
	}
	return NewClusterVault(a, s), nil
}

func vaultWorld(t *testing.T, kv ...any) (*Settings, *vaultsim.Server, *http.Client) {
	t.Helper()
	sim := vaultsim.New("hvs.vault-root-token", nil)
	srv := httptest.NewTLSServer(sim)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	host, port, _ := strings.Cut(u.Host, ":")
	var p int
	fmt.Sscanf(port, "%d", &p)
	s := goldenSettings(t, append([]any{"vault_host", host, "vault_port", p, "vault_tls_verify", false}, kv...)...)
	return s, sim, srv.Client()
}

// TestClusterVaultBootstrap: the backend's Vault objects let a node do exactly what its
// cloud-init does — log in with the role id and its single-use secret id, read the token —
// once; cleanup removes everything.
func TestClusterVaultBootstrap(t *testing.T) {
	ctx := context.Background()
	s, sim, hc := vaultWorld(t, "bootstrap", "rke2")
	cv, err := flatClusterVault(s)
	if err != nil {
		t.Fatal(err)
	}
	join := secret.New("K10-join-token-for-the-cluster")
	for range 2 { // idempotent
		if err := cv.Ensure(ctx, testCluster, join); err != nil {
			t.Fatal(err)
		}
	}
	if c := cv.Check(ctx); !c.OK {
		t.Fatalf("check: %+v", c)
	}
	spec := goldenSpec(t, s)
	inv := Inventory{Cluster: testCluster, Role: RoleAgent, Stage: StageInstall, Join: "prod-server-0"}
	creds, err := cv.NodeCredentials(ctx, testCluster)
	if err != nil {
		t.Fatal(err)
	}
	defer creds.SecretID.Forget()
	ud, err := s.CloudInit().Render(NewNodeConfig(s, spec, "prod-agent-0", inv, creds, "10.0.0.11"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := bootToken(ctx, hc, s.VaultAddr(), ud)
	if err != nil || got != join.Reveal() {
		t.Fatalf("the node read %q, %v; want the join token", got, err)
	}
	if _, err := bootToken(ctx, hc, s.VaultAddr(), ud); err == nil || !strings.Contains(err.Error(), "login") {
		t.Fatalf("the same user data worked twice: %v", err)
	}
	if err := cv.Remove(ctx, testCluster); err != nil {
		t.Fatal(err)
	}
	if err := cv.Remove(ctx, testCluster); err != nil {
		t.Fatal(err)
	}
	if sim.Policy(VaultPolicyName(testCluster)) || sim.Role("approle/"+VaultRoleName(testCluster)) || sim.Secret("secret/"+VaultSecretPath(testCluster)) != nil {
		t.Error("vault objects left after Remove")
	}
	if _, err := cv.NodeCredentials(ctx, testCluster); err == nil {
		t.Error("credentials issued after Remove")
	}
}

func TestClusterVaultCheckNamesTheMount(t *testing.T) {
	s, _, _ := vaultWorld(t, "vault_approle_mount", "nodes")
	cv, err := flatClusterVault(s)
	if err != nil {
		t.Fatal(err)
	}
	if c := cv.Check(context.Background()); c.OK || !strings.Contains(c.Detail, "auth/nodes") {
		t.Errorf("check %+v, want a failure naming auth/nodes", c)
	}
	if err := cv.Ensure(context.Background(), "not-a-uuid", secret.New("x")); err == nil {
		t.Error("a malformed cluster id was accepted")
	}
}

// bootToken plays the node: parse its user data and fetch the token as its script would.
func bootToken(ctx context.Context, hc *http.Client, vaultAddr string, ud UserData) (string, error) {
	b, err := nodeemu.Parse(ud.Bytes())
	if err != nil {
		return "", err
	}
	return b.Token(ctx, hc, vaultAddr)
}

// TestClusterVaultUnderFaults: with 30 % of Vault's answers failing (5xx, 429, resets, lost
// responses) every operation either succeeds or fails transiently — the agent's next pass
// retries it — and the end state is the same: one policy, one role, one secret; the node logs in.
func TestClusterVaultUnderFaults(t *testing.T) {
	ctx := context.Background()
	s, sim, hc := vaultWorld(t)
	sim.SetFaults(vaultsim.Faults{Rate: 0.3, Seed: 42, Kinds: []simfault.Kind{simfault.Status500, simfault.Status502,
		simfault.Status503, simfault.Status429, simfault.Reset, simfault.LoseResponse},
		Operations: []string{"policy.*", "approle.*", "kv.*"}})
	cv, err := flatClusterVault(s)
	if err != nil {
		t.Fatal(err)
	}
	token := secret.New("registration-token-under-faults")
	others := []string{strings.Repeat("1", 32), strings.Repeat("2", 32)}
	for _, c := range append(others, testCluster) { // several clusters, so that faults surely hit
		untilDone(t, "ensure", func() error { return cv.Ensure(ctx, c, token) })
	}
	var creds VaultCredentials
	for range 3 { // earlier secret ids stay unused and expire
		untilDone(t, "credentials", func() error { var err error; creds, err = cv.NodeCredentials(ctx, testCluster); return err })
		creds.SecretID.Forget()
	}
	if n := len(sim.FaultLog()); n < 4 {
		t.Fatalf("only %d faults injected; the test proves nothing", n)
	}
	sim.SetFaults(vaultsim.Faults{})
	ud, err := s.CloudInit().Render(NewNodeConfig(s, goldenSpec(t, s), "prod-agent-0",
		Inventory{Cluster: testCluster, Role: RoleAgent, Stage: StageInstall}, creds, ""))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := bootToken(ctx, hc, s.VaultAddr(), ud); err != nil || got != token.Reveal() {
		t.Fatalf("node read %q, %v", got, err)
	}
	sim.SetFaults(vaultsim.Faults{Rate: 0.3, Seed: 7, Operations: []string{"policy.*", "approle.*", "kv.*"}})
	untilDone(t, "remove", func() error { return cv.Remove(ctx, testCluster) })
	if sim.Policy(VaultPolicyName(testCluster)) || sim.Role("approle/"+VaultRoleName(testCluster)) || sim.Secret("secret/"+VaultSecretPath(testCluster)) != nil {
		t.Error("vault objects left after Remove")
	}
}

// untilDone retries f like the agent's passes do: only transient failures may happen.
func untilDone(t *testing.T, what string, f func() error) {
	t.Helper()
	for range 20 {
		err := f()
		if err == nil {
			return
		}
		if !failure.IsTransient(err) {
			t.Fatalf("%s: a permanent error under transient faults: %v", what, err)
		}
	}
	t.Fatalf("%s: still failing after 20 passes", what)
}
