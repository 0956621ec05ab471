package vaulttest

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// siteAgent returns the product binary: $SITE_AGENT_BIN when set (scripts/vault/test.sh builds it
// from the repository root), else one built here from the repository root's own module, so it
// is exactly what ships and not a build against this module's Vault-laden dependency graph.
func siteAgent(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SITE_AGENT_BIN"); p != "" {
		return p
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "site-agent-vault")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "site-agent")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/site-agent")
		cmd.Dir = filepath.Join("..", "..")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/site-agent: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

type run struct {
	code           int
	stdout, stderr string
}

func (r run) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

func runAgent(t *testing.T, args ...string) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, siteAgent(t), args...)
	cmd.Env = append(os.Environ(), "SITE_AGENT_CYCLE_TIMEOUT=50s")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := run{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// agentWorld is a Waldur simulator with one pending order and a configuration file whose Waldur
// token is a Vault reference.
type agentWorld struct {
	sim    *waldursim.Server
	world  *scenario.World
	config string
}

func newAgentWorld(t *testing.T, c *cluster, vaultToken string) *agentWorld {
	t.Helper()
	sim := waldursim.New(waldursim.Options{Token: scenario.Token})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	w := &agentWorld{sim: sim, world: scenario.New(sim, scenario.Options{Users: 2})}
	dir := t.TempDir()
	text := w.world.Config(srv.URL, "state_file: "+filepath.Join(dir, "backend.json"))
	if !strings.Contains(text, scenario.Token) {
		t.Fatal("scenario config no longer carries the token")
	}
	text = strings.Replace(text, scenario.Token, "vault:secret/site/waldur#token", 1)
	text = c.vaultYAML(vaultToken) + "heartbeat_file: " + filepath.Join(dir, "heartbeat") + "\n" + text
	w.config = filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(w.config, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return w
}

func noLeak(t *testing.T, r run, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(r.stdout+r.stderr, s) {
			t.Fatalf("output reveals a secret:\n%s", r)
		}
	}
}

// TestBinaryResolvesWaldurTokenFromVault runs the built binary: check-config resolves the
// reference, order_process --once authenticates to Waldur with the resolved token, and a broken
// reference fails with a message naming key and reference. No output contains a secret.
func TestBinaryResolvesWaldurTokenFromVault(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	c.put(t, "secret/site/waldur", map[string]any{"token": scenario.Token})
	token := c.token(t, "site-agent")
	w := newAgentWorld(t, c, token)
	order := w.world.CreateOrder("vaulted", map[string]float64{"cpu": 2, "ram": 4})

	r := runAgent(t, "check-config", "-c", w.config)
	if r.code != 0 || !strings.Contains(r.stdout, "configuration is valid") {
		t.Fatalf("check-config: %s", r)
	}
	noLeak(t, r, scenario.Token, token)

	r = runAgent(t, "-m", "order_process", "-c", w.config, "--once")
	if r.code != 0 {
		t.Fatalf("order_process --once: %s", r)
	}
	noLeak(t, r, scenario.Token, token)
	if got, _ := w.sim.Order(order.UUID); got.State != waldursim.OrderDone {
		t.Fatalf("order %s (%s); the agent did not authenticate with the resolved token", got.State, got.ErrorMessage)
	}

	c.put(t, "secret/site/waldur", map[string]any{"tok": scenario.Token})
	r = runAgent(t, "check-config", "-c", w.config)
	want := `offerings[0].waldur_api_token: cannot resolve vault:secret/site/waldur#token: key "token" missing in secret secret/site/waldur (its keys: tok)`
	if r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Fatalf("broken reference: want exit 2 and %q\n%s", want, r)
	}
	noLeak(t, r, scenario.Token, token)
}

// TestBinaryReloadResolvesAgain starts the agent with a wrong Waldur token in Vault, fixes the
// secret in Vault and sends SIGHUP: the reloaded agent resolves the new value and completes the
// order.
func TestBinaryReloadResolvesAgain(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	c.put(t, "secret/site/waldur", map[string]any{"token": "stale-token-0000000000"})
	w := newAgentWorld(t, c, c.token(t, "site-agent"))
	order := w.world.CreateOrder("reloaded", map[string]float64{"cpu": 1, "ram": 2})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, siteAgent(t), "-m", "order_process", "-c", w.config, "--period", "1s")
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	time.Sleep(3 * time.Second) // a few failing cycles with the stale token
	if got, _ := w.sim.Order(order.UUID); got.State == waldursim.OrderDone {
		t.Fatal("order processed with a stale token")
	}
	c.put(t, "secret/site/waldur", map[string]any{"token": scenario.Token})
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(45 * time.Second)
	for {
		if got, _ := w.sim.Order(order.UUID); got.State == waldursim.OrderDone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("order not processed after reload; agent output:\n%s", out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	if strings.Contains(out.String(), scenario.Token) || strings.Contains(out.String(), "stale-token-0000000000") {
		t.Fatalf("agent output reveals a token:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "configuration reloaded") {
		t.Fatalf("no reload logged:\n%s", out.String())
	}
}

// syncBuffer collects a running process's output for reading while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
