package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// check-config, the agent and diagnostics run the same validation: a file the agent refuses
// (backend settings included — a Rancher offering without cluster_id and password, an unknown
// backend) is refused by all three, with every problem at once, each naming its offering and
// key, and nothing sent to Waldur.
func TestCheckConfigRefusesWhatTheAgentRefuses(t *testing.T) {
	e := newEnv(t, waldursim.Options{})
	text := readFile(t, e.config) + fmt.Sprintf(`  - name: "Rancher"
    waldur_api_url: "%s/api/"
    waldur_api_token: "%s"
    waldur_offering_uuid: "e2ef0000-0000-0000-0000-0000000000aa"
    backend_type: rancher
    order_processing_backend: rancher
    backend_settings: {backend_url: "https://rancher.example.com", username: token-x, verify_cert: no, unknown_key: 1}
  - name: "Slurm"
    waldur_api_url: "%s/api/"
    waldur_api_token: "%s"
    waldur_offering_uuid: "e2ef0000-0000-0000-0000-0000000000bb"
    backend_type: slurm
    order_processing_backend: slurm
`, e.url, scenario.Token, e.url, scenario.Token)
	path := filepath.Join(e.dir, "refused.yaml")
	writeFile(t, path, text)
	want := []string{
		`offering "Rancher" (offerings[1]): offerings[1].backend_settings.password: `,
		`offering "Rancher" (offerings[1]): offerings[1].backend_settings.cluster_id: is required`,
		`offering "Slurm" (offerings[2]): offerings[2].order_processing_backend: unknown backend "slurm"`,
	}
	e.sim.ResetCalls()
	var first string
	for _, args := range [][]string{{"check-config", "-c", path}, {"-m", "order_process", "-c", path, "--once"}, {"diagnostics", "-c", path}} {
		r := e.run(args...)
		if r.code != 2 || !strings.Contains(r.stderr, "3 problems") {
			t.Fatalf("%v: want exit 2 and 3 problems: %s", args, r)
		}
		for _, w := range want {
			if !strings.Contains(r.stderr, "\n  "+w) {
				t.Errorf("%v: lacks %q:\n%s", args, w, r.stderr)
			}
		}
		if first == "" {
			first = r.stderr
		} else if r.stderr != first {
			t.Errorf("%v reports differently:\n%s\nvs\n%s", args, r.stderr, first)
		}
		if args[0] == "check-config" && !strings.Contains(r.stdout, "warning: offerings[1].backend_settings.unknown_key: unknown key, ignored") {
			t.Errorf("check-config does not show the backend's warning: %s", r)
		}
	}
	if n := e.sim.TotalCalls(); n != 0 {
		t.Fatalf("%d requests sent for an invalid configuration", n)
	}
	r := e.run("diagnostics", "-c", path, "--output", "json")
	if r.code != 2 || strings.Count(r.stdout, `"problem":`) != 3 || !strings.Contains(r.stdout, `"key": "offerings[1].backend_settings.cluster_id"`) {
		t.Fatalf("diagnostics --output json of an invalid file: %s", r)
	}
}
