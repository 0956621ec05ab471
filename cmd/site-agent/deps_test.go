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
