package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// The Waldur token as a systemd credential (LoadCredential=waldur-token:…): the file says
// credential:waldur-token, the binary reads $CREDENTIALS_DIRECTORY/waldur-token, and the token
// never shows in its output. Without the directory the file is refused, naming the key, before
// any request.
func TestTokenFromSystemdCredential(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	text, err := os.ReadFile(e.config)
	if err != nil {
		t.Fatal(err)
	}
	withRef := strings.Replace(string(text), scenario.Token, "credential:waldur-token", 1)
	withRef = strings.Replace(withRef, "log_level: INFO", "log_level: DEBUG", 1)
	if withRef == string(text) {
		t.Fatal("the scenario's configuration has no token to replace")
	}
	if err := os.WriteFile(e.config, []byte(withRef), 0o600); err != nil {
		t.Fatal(err)
	}
	creds := t.TempDir()
	if err := os.WriteFile(filepath.Join(creds, "waldur-token"), []byte(scenario.Token+"\n"), 0o400); err != nil {
		t.Fatal(err)
	}

	for _, env := range [][]string{nil, {"CREDENTIALS_DIRECTORY=" + filepath.Join(e.dir, "nowhere")}} {
		r := e.runEnv(env, "-m", "order_process", "-c", e.config, "--once")
		if r.code != 2 || !strings.Contains(r.stderr, "offerings[0].waldur_api_token") || e.sim.TotalCalls() != 0 {
			t.Fatalf("%v: want exit 2 naming the key before any request (%d sent): %s", env, e.sim.TotalCalls(), r)
		}
	}

	o := e.world.CreateOrder("by-credential", map[string]float64{"cpu": 1})
	r := e.runEnv([]string{"CREDENTIALS_DIRECTORY=" + creds}, "-m", "order_process", "-c", e.config, "--once")
	if r.code != 0 {
		t.Fatalf("with the credential: %s", r)
	}
	if got, _ := e.sim.Order(o.UUID); got.State != waldursim.OrderDone {
		t.Fatalf("order %s, want done", got.State)
	}
	if strings.Contains(r.stdout+r.stderr, scenario.Token) {
		t.Fatal("the token read from the credential appears in the output")
	}
}
