package agent

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/modes"
)

const checkOffering = `  - name: %s
    waldur_api_url: https://waldur.example.com/api/
    waldur_api_token: tok-123456
    waldur_offering_uuid: e2ef0000-0000-0000-0000-00000000000%d
    backend_type: x
    order_processing_backend: %s
    reporting_backend: %s
    backend_settings: {%s}
`

// Check finds what Build refuses — every backend's problems, in every offering and mode, keyed
// by offering and backend_settings key — and what it only warns about, with no logger.
func TestCheckReportsEveryProblemAtOnce(t *testing.T) {
	file := "offerings:\n" +
		fmt.Sprintf(checkOffering, "A", 1, "inmemory", "inmemory", "usage_fraction: -1, typo_key: 1") +
		fmt.Sprintf(checkOffering, "B", 2, "slurm", "inmemory", "") +
		fmt.Sprintf(checkOffering, "C", 3, "rancher", "rancher", "username: token-x")
	cfg, _, err := config.Parse("check.yaml", []byte(file), config.Options{Environ: func() []string { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	warnings, err := Check(cfg, modes.ModeAll)
	var es config.Errors
	if !errors.As(err, &es) {
		t.Fatalf("got %T %v", err, err)
	}
	want := []string{
		`offering "A" (offerings[0]): offerings[0].backend_settings.usage_fraction: must be between 0 and 1000`,
		`offering "B" (offerings[1]): offerings[1].order_processing_backend: unknown backend "slurm"`,
		`offering "C" (offerings[2]): offerings[2].backend_settings.password: the Rancher API secret key is required`,
		`offering "C" (offerings[2]): offerings[2].backend_settings.cluster_id: is required`,
	}
	if len(es) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(es), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(es[i].Detail(), w) || es[i].Path != "check.yaml" {
			t.Errorf("problem %d = %q, want it to begin %q", i, es[i].Detail(), w)
		}
	}
	if len(warnings) != 1 || warnings[0] != "offerings[0].backend_settings.typo_key: unknown key, ignored" {
		t.Errorf("warnings %q", warnings)
	}
	if _, berr := Build(cfg, Options{Mode: modes.ModeAll, Stdout: &strings.Builder{}}); berr == nil || berr.Error() != err.Error() {
		t.Errorf("Build and Check disagree:\n%v\n%v", berr, err)
	}
}

// The shipped example configurations pass the checks the agent runs before it starts (the
// packages' test runs check-config on the installed copies).
func TestShippedExamplesPassCheck(t *testing.T) {
	for _, name := range []string{"inmemory", "openstack", "rancher", "rke2"} {
		cfg, _, err := config.Load(filepath.Join("..", "..", "configs", name+".yaml"), config.Options{Environ: func() []string { return nil }})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if warnings, err := Check(cfg, modes.ModeAll); err != nil || len(warnings) > 0 {
			t.Errorf("%s.yaml: %v (warnings %v)", name, err, warnings)
		}
	}
}
