package agent

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/modes"
	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// offeringVariants are the ways an offering can be configured that decide its modes: polling,
// and events (stomp_enabled). A mode that needs another kind of offering fails
// TestEveryModeRunsFromTheRegistryAlone until a variant here configures it.
var offeringVariants = map[string]string{
	"polling": "",
	"events":  "stomp_enabled: true",
}

// variantConfig is the scenario world's configuration with the offering-level line added.
func variantConfig(w *scenario.World, url, line string) string {
	yaml := w.Config(url)
	if line == "" {
		return yaml
	}
	return strings.Replace(yaml, "    backend_type: inmemory\n", "    backend_type: inmemory\n    "+line+"\n", 1)
}

// Every mode of the registry is complete and is started by the agent from its Spec alone: for
// an offering that runs it (as the Spec's Skip decides) -m NAME builds one runner of that name
// with the Spec's period over the offering, and one pass of it succeeds against the Waldur
// simulator; -m all starts exactly the modes the offering configures; the period variable is
// read. Nothing in this package or in cli names a mode (TestNoModeIsNamedOutsideTheRegistry), so
// a new Spec needs no change outside internal/modes and internal/config.
func TestEveryModeRunsFromTheRegistryAlone(t *testing.T) {
	seen := map[string]bool{}
	for _, spec := range modes.Specs() {
		if spec.Name == "" || seen[spec.Name] || spec.Name == modes.ModeAll {
			t.Fatalf("mode name %q is empty, repeated or reserved", spec.Name)
		}
		seen[spec.Name] = true
		if spec.Period <= 0 || spec.PeriodEnv == "" || spec.Processor == "" || spec.BackendKey == nil ||
			spec.Requires == nil || spec.Skip == nil || spec.New == nil {
			t.Fatalf("mode %s: incomplete Spec %+v", spec.Name, spec)
		}
		t.Run(spec.Name, func(t *testing.T) { checkModeRuns(t, spec) })
	}
}

func checkModeRuns(t *testing.T, spec modes.Spec) {
	periods, err := Periods(spec.Name, 0, func() []string { return []string{spec.PeriodEnv + "=2.5"} })
	if err != nil || periods[spec.Name] != 150*time.Second {
		t.Errorf("%s=2.5 gives %v, %v; want 2m30s", spec.PeriodEnv, periods, err)
	}
	ran := false
	for variant, line := range offeringVariants {
		sim := waldursim.New(waldursim.Options{Token: scenario.Token})
		srv := httptest.NewServer(sim)
		defer srv.Close()
		w := scenario.New(sim, scenario.Options{Users: 1})
		yaml := variantConfig(w, srv.URL, line)
		cfg, warnings, err := config.Parse("modes.yaml", []byte(yaml), config.Options{Environ: func() []string { return nil }})
		if err != nil || len(warnings) > 0 {
			t.Fatalf("%s: %v %v", variant, err, warnings)
		}
		cfg.HeartbeatFile = ""
		off := cfg.Offerings[0]
		if spec.Skip(off) != "" {
			continue
		}
		ran = true
		if key, name := spec.BackendKey(off); name == "" || !strings.Contains(yaml, "\n    "+key+":") {
			t.Errorf("%s: backend key %q (value %q) is not a key of the offering config reads", variant, key, name)
		}
		a, err := Build(cfg, Options{Mode: spec.Name, Stdout: io.Discard, Version: "test"})
		if err != nil {
			t.Fatalf("%s: build: %v", variant, err)
		}
		if len(a.tasks) != 1 || a.tasks[0].Name() != spec.Name || a.periods[0] != spec.Period || len(a.tasks[0].Units) != 1 {
			t.Errorf("%s: -m %s built %d runners (%v), want one named %s every %s", variant, spec.Name, len(a.tasks), a.periods, spec.Name, spec.Period)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := a.RunOnce(ctx); err != nil {
			t.Errorf("%s: one pass of %s: %v", variant, spec.Name, err)
		}
		cancel()
		a.Close()
		checkModeAll(t, cfg, off)
	}
	if !ran {
		t.Errorf("no offering variant runs mode %s: add the way it is configured to offeringVariants", spec.Name)
	}
}

// checkModeAll: -m all starts the modes the offering configures, in the registry's order.
func checkModeAll(t *testing.T, cfg *config.Config, off config.Offering) {
	a, err := Build(cfg, Options{Mode: modes.ModeAll, Stdout: io.Discard})
	if err != nil {
		t.Fatalf("-m all: %v", err)
	}
	defer a.Close()
	var names []string
	for _, r := range a.tasks {
		names = append(names, r.Name())
	}
	if want := modes.OfferingModes(off); !slices.Equal(names, want) {
		t.Errorf("-m all started %v, want %v", names, want)
	}
}

// Nothing outside internal/modes special-cases a mode: the composition root and the command line
// name none (cli's -m default excepted), so adding a mode cannot need a change here.
func TestNoModeIsNamedOutsideTheRegistry(t *testing.T) {
	var words []string
	for _, n := range modes.Names() {
		words = append(words, regexp.QuoteMeta(n))
	}
	named := regexp.MustCompile(`\b(` + strings.Join(words, "|") + `)\b`)
	allowed := map[string]map[string]bool{".": {"ModeAll": true}, "../cli": {"ModeAll": true, "ModeOrderProcess": true}}
	for dir, allow := range allowed {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.BasicLit:
					if s, err := strconv.Unquote(n.Value); n.Kind == token.STRING && err == nil && named.MatchString(s) {
						t.Errorf("%s: the literal %q names a mode; take it from the registry in internal/modes", file, s)
					}
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok && x.Name == "modes" && strings.HasPrefix(n.Sel.Name, "Mode") &&
						n.Sel.Name != "Mode" && !allow[n.Sel.Name] {
						t.Errorf("%s: modes.%s special-cases a mode; give its Spec what it needs instead", file, n.Sel.Name)
					}
				}
				return true
			})
		}
	}
}
