package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestReleaseLinksNoTestCode keeps simulators, their OpenAPI validator and the testing package out
// of the release binary (they cost start-up time and memory, and are not product code).
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
