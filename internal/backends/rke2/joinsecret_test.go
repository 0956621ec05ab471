package rke2

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/simfault"
	"github.com/waldur/site-agent/internal/sim/vaultsim"
)

const importURL = "https://rancher.example.com/v3/import/regtoken0123456789_c-m-abcdefgh.yaml"

func joinSecret(url string) JoinSecret {
	return JoinSecret{ImportURL: secret.New(url)}
}

func storedToken(sim *vaultsim.Server) string {
	tok, _ := sim.Secret("secret/" + VaultSecretPath(testCluster))[SecretKeyToken].(string)
	return tok
}

// TestJoinTokenLifecycle: the join token is made with the initial server only, read by every
// node, kept when the bootstrap access goes and when a scale-up months later writes it again,
// kept when Rancher's import URL changes, and removed only with the cluster.
func TestJoinTokenLifecycle(t *testing.T) {
	ctx := context.Background()
	s, sim, hc := vaultWorld(t, "bootstrap", "rke2")
	cv, err := flatClusterVault(s)
	if err != nil {
		t.Fatal(err)
	}
	err = cv.EnsureJoin(ctx, testCluster, joinSecret(importURL), false)
	if _, public := failure.PublicMessage(err); !public || !strings.Contains(err.Error(), "join token is missing") || storedToken(sim) != "" {
		t.Fatalf("a joining node without a stored token: %v (stored %q)", err, storedToken(sim))
	}
	if err := cv.EnsureJoin(ctx, testCluster, joinSecret(importURL), true); err != nil {
		t.Fatal(err)
	}
	first := storedToken(sim)
	if len(first) != 64 {
		t.Fatalf("join token %q, want 64 hex digits", first)
	}
	for _, step := range []struct {
		name      string
		do        func() error
		mayCreate bool
	}{
		{"again", func() error { return nil }, true},
		{"after the access went", func() error { return cv.RemoveAccess(ctx, testCluster) }, false},
		{"after a new import URL", func() error { return nil }, false},
	} {
		if err := step.do(); err != nil {
			t.Fatal(err)
		}
		url := importURL
		if step.name == "after a new import URL" {
			url = strings.Replace(importURL, "regtoken", "newtoken", 1)
		}
		if err := cv.EnsureJoin(ctx, testCluster, joinSecret(url), step.mayCreate); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got := storedToken(sim); got != first {
			t.Fatalf("%s: the join token changed", step.name)
		}
		if got := sim.Secret("secret/" + VaultSecretPath(testCluster))[SecretKeyImportURL]; got != url {
			t.Fatalf("%s: import URL %v", step.name, got)
		}
		if tok := bootWith(t, cv, s, hc, sim); tok != first {
			t.Fatalf("%s: the node read another token", step.name)
		}
	}
	if err := cv.RemoveAccess(ctx, testCluster); err != nil {
		t.Fatal(err)
	}
	if sim.Policy(VaultPolicyName(testCluster)) || sim.Role("approle/"+VaultRoleName(testCluster)) || storedToken(sim) != first {
		t.Fatal("RemoveAccess must remove the policy and AppRole and keep the secret")
	}
	if err := cv.Remove(ctx, testCluster); err != nil {
		t.Fatal(err)
	}
	if storedToken(sim) != "" {
		t.Fatal("the join token is left after Remove")
	}
}

// bootWith plays a new node: fresh credentials, rendered user data, login and read.
func bootWith(t *testing.T, cv *ClusterVault, s *Settings, hc *http.Client, sim *vaultsim.Server) string {
	t.Helper()
	creds, err := cv.NodeCredentials(context.Background(), testCluster)
	if err != nil {
		t.Fatal(err)
	}
	defer creds.SecretID.Forget()
	inv := Inventory{Cluster: testCluster, Role: RoleAgent, Stage: StageInstall, Join: "prod-server-0"}
	ud, err := s.CloudInit().Render(NewNodeConfig(s, goldenSpec(t, s), "prod-agent-0", inv, creds, "10.0.0.11"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(ud.Bytes()), storedToken(sim)) {
		t.Fatal("the join token is in the user data")
	}
	tok, err := bootToken(context.Background(), hc, s.VaultAddr(), ud)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestJoinTokenMadeOnce: agents racing to create the cluster's secret, a create sent by an
// agent that found no secret after another made it, and creates whose answers are lost or
// fail (30 % of Vault's answers) end with one token that never changes.
func TestJoinTokenMadeOnce(t *testing.T) {
	ctx := context.Background()
	s, sim, _ := vaultWorld(t, "bootstrap", "rke2")
	var wg sync.WaitGroup
	for range 4 {
		cv, err := flatClusterVault(s)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cv.EnsureJoin(ctx, testCluster, joinSecret(importURL), true); err != nil {
				t.Errorf("racing create: %v", err)
			}
		}()
	}
	wg.Wait()
	first := storedToken(sim)
	if first == "" {
		t.Fatal("no token")
	}
	// Two agents that both found no secret: the second create is refused, the token stays.
	cv, _ := flatClusterVault(s)
	other := strings.Repeat("3", 32)
	for i := range 2 {
		err := cv.createJoinSecret(ctx, cv.secretPath(other), joinSecret(importURL))
		if got := sim.Secret("secret/" + VaultSecretPath(other)); (i == 0) != (err == nil) || got == nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	sim.SetFaults(vaultsim.Faults{Rate: 0.3, Seed: 11, Operations: []string{"kv.*", "policy.*", "approle.*"},
		Kinds: []simfault.Kind{simfault.LoseResponse, simfault.Status500, simfault.Status503, simfault.Reset}})
	for i := range 4 {
		url := fmt.Sprintf("%s?v=%d", importURL, i%3) // the import URL changes now and then
		untilDone(t, "ensure", func() error { return cv.EnsureJoin(ctx, testCluster, joinSecret(url), true) })
		untilDone(t, "ensure another cluster", func() error { return cv.EnsureJoin(ctx, other, joinSecret(url), i == 0) })
		if storedToken(sim) != first {
			t.Fatalf("pass %d: the join token changed", i)
		}
	}
	if len(sim.FaultLog()) < 5 {
		t.Fatalf("only %d faults injected", len(sim.FaultLog()))
	}
}

// TestJoinSecretRefusesAndNeverLeaks: an import URL the script could not quote is refused; no
// error names the join token, the import URL or the registry password; the registries.yaml is
// valid and carries the credentials.
func TestJoinSecretRefusesAndNeverLeaks(t *testing.T) {
	ctx := context.Background()
	s, sim, _ := vaultWorld(t, "bootstrap", "rke2", "private_registry_url", "https://registry.example.com:5000",
		"private_registry_user", "puller", "private_registry_password", `pa"ss\word`)
	cv, _ := flatClusterVault(s)
	reg, err := RegistriesYAML(s)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Forget()
	if err := cv.EnsureJoin(ctx, testCluster, JoinSecret{ImportURL: secret.New(`https://r/x"; rm -rf /`), Registries: reg}, true); err == nil ||
		strings.Contains(err.Error(), "rm -rf") {
		t.Fatalf("a bad import URL: %v", err)
	}
	if err := cv.EnsureJoin(ctx, testCluster, JoinSecret{ImportURL: secret.New(importURL), Registries: reg}, true); err != nil {
		t.Fatal(err)
	}
	raw, _ := sim.Secret("secret/" + VaultSecretPath(testCluster))[SecretKeyRegistries].(string)
	text, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Mirrors map[string]struct{ Endpoint []string }
		Configs map[string]struct {
			Auth struct{ Username, Password string }
		}
	}
	if err := yaml.Unmarshal(text, &doc); err != nil || doc.Mirrors["docker.io"].Endpoint[0] != "https://registry.example.com:5000" ||
		doc.Configs["registry.example.com:5000"].Auth.Password != `pa"ss\word` || doc.Configs["registry.example.com:5000"].Auth.Username != "puller" {
		t.Fatalf("registries.yaml %s: %+v %v", text, doc, err)
	}
	token := storedToken(sim) // now break Vault for good and look at the errors
	sim.SetFaults(vaultsim.Faults{Rate: 1, Seed: 1, Kinds: []simfault.Kind{simfault.Status500}})
	err = cv.EnsureJoin(ctx, testCluster, JoinSecret{ImportURL: secret.New(importURL), Registries: reg}, true)
	if err == nil || !failure.IsTransient(err) {
		t.Fatalf("vault down: %v", err)
	}
	for _, v := range []string{token, importURL, `pa"ss\word`} {
		if v != "" && strings.Contains(err.Error()+fmt.Sprintf("%v %+v", reg, JoinSecret{ImportURL: secret.New(importURL)}), v) {
			t.Errorf("%q leaks", v)
		}
	}
	if errors.Is(err, failure.ErrNotFound) {
		t.Error("vault down is not a missing secret")
	}
}
