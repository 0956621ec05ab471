package main

import (
	"os/exec"
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
