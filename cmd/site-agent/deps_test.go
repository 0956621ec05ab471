package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReleaseLinksNoTestCode keeps simulators, their OpenAPI validator, the testing package,
// client-go's generated clientset and the virtual-clusters load tool (with remotedialer and
// net/http/pprof) out of the release binary (they cost start-up time and memory, and none of
// them is the agent).
func TestReleaseLinksNoTestCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{
		"github.com/waldur/site-agent/internal/sim/",
		"github.com/waldur/site-agent/internal/demo",
		"github.com/waldur/site-agent/internal/testenv",
		"github.com/getkin/kin-openapi",
		"github.com/santhosh-tekuri/jsonschema",
		// client-go's generated clientset registers every API group at start-up (about 7 MiB
		// of idle memory); the agent uses internal/kubeapi with the few groups it needs.
		"k8s.io/client-go/kubernetes",
		"k8s.io/client-go/informers",
		"k8s.io/client-go/tools/leaderelection",
		"k8s.io/client-go/applyconfigurations",
		// The virtual-clusters tool is its own program (cmd/site-agent-vclusters).
		"github.com/waldur/site-agent/internal/vclusters",
		"github.com/rancher/remotedialer",
		"net/http/pprof",
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("implausibly short dependency list: %v", deps)
	}
	for _, d := range deps {
		if d == "testing" || strings.HasPrefix(d, "testing/") {
			t.Errorf("release binary links %s", d)
		}
		for _, f := range forbidden {
			if strings.HasPrefix(d, f) {
				t.Errorf("release binary links %s", d)
			}
		}
	}
}

// TestLayoutArrows checks the arrows of docs/layout.md this test knows (product code only; tests
// may import what they need): clients sit below backends, the configuration and the modes and
// take plain values; only the command line and the demo build on the composition root
// (internal/agent), and nothing builds on the command line but the programs.
func TestLayoutArrows(t *testing.T) {
	const mod = "github.com/waldur/site-agent/"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, mod+"internal/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	rules := []struct {
		from      string   // package path prefix
		forbidden []string // import path prefixes
		except    []string // importers the rule does not cover
	}{
		{"internal/clients/", []string{"internal/backends", "internal/config", "internal/modes", "internal/waldurclient", "internal/agent", "internal/cli"}, nil},
		{"internal/", []string{"internal/agent"}, []string{"internal/agent", "internal/cli", "internal/demo"}},
		{"internal/", []string{"internal/cli"}, []string{"internal/cli", "internal/demo"}},
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 30 {
		t.Fatalf("implausibly few packages: %d", len(lines))
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], mod)
		for _, r := range rules {
			if !strings.HasPrefix(pkg, r.from) || hasPrefix(pkg, r.except) {
				continue
			}
			for _, imp := range fields[1:] {
				if p := strings.TrimPrefix(imp, mod); p != imp && hasPrefix(p, r.forbidden) {
					t.Errorf("%s imports %s", pkg, p)
				}
			}
		}
	}
}

// hasPrefix reports whether pkg is one of the packages or under one of them.
func hasPrefix(pkg string, prefixes []string) bool {
	for _, p := range prefixes {
		if pkg == p || strings.HasPrefix(pkg, p+"/") {
			return true
		}
	}
	return false
}

// TestBackendsLinkNoTemplateExecutor keeps text/template (and html/template, built on it) out
// of the backends: executing such a template calls reflect's MethodByName, which makes the
// linker keep every exported method of the program (golang/go#62257). The rke2 cloud-init
// templates render with internal/backends/rke2/nodetemplate instead.
func TestBackendsLinkNoTemplateExecutor(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/waldur/site-agent/internal/backends/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/waldur/site-agent/internal/backends/rke2/nodetemplate") {
		t.Fatalf("the backends' dependencies miss the rke2 renderer: %d packages", len(deps))
	}
	for _, d := range deps {
		if d == "text/template" || d == "html/template" {
			t.Errorf("the backends link %s", d)
		}
	}
}

// TestReleaseKeepsNoMethodForReflection keeps the linker's dead-code elimination of methods in
// the release binary: once a reachable function calls reflect's Method or MethodByName (as
// executing a text/template or html/template does), the linker keeps every exported method of
// every reachable type (golang/go#62257), 5 MB of binary and of idle memory. The linker marks
// such a function <ReflectMethod> in its -dumpdep output. html/template is not linked at all;
// text/template only because cobra imports it, whose usage, help and version output run
// without it as long as no SetUsageTemplate, SetHelpTemplate or SetVersionTemplate is called.
func TestReleaseKeepsNoMethodForReflection(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if f[0] == "html/template" || slices.Contains(f[1:], "html/template") ||
			(slices.Contains(f[1:], "text/template") && f[0] != "github.com/spf13/cobra" && f[0] != "html/template") {
			t.Errorf("%s imports a template executor", f[0])
		}
	}
	if testing.Short() {
		t.Skip("-short: the release binary is not linked")
	}
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -dumpdep", "-o", filepath.Join(t.TempDir(), "site-agent"), ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var deps bytes.Buffer
	cmd.Stderr = &deps // -dumpdep writes "from -> to" for every edge the linker follows
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build: %v\n%s", err, tailOf(deps.String()))
	}
	edges := strings.Count(deps.String(), " -> ")
	if edges < 10000 {
		t.Fatalf("implausibly few reachability edges (%d): is -dumpdep still the linker's flag?", edges)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(deps.String(), "\n") {
		if from, _, ok := strings.Cut(line, " <ReflectMethod> -> "); ok && !seen[from] {
			seen[from] = true
			t.Errorf("%s calls reflect's Method or MethodByName: the linker keeps every exported method", from)
		}
	}
}

// tailOf is the last 2,000 bytes of s.
func tailOf(s string) string { return s[max(len(s)-2000, 0):] }
