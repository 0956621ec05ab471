package deploy

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/testenv"
)

// need returns the value of an environment variable naming a tool or image, skipping (or
// failing in CI) when the tier is off or the variable is unset.
func need(t *testing.T, name, how string) string {
	t.Helper()
	if err := testenv.Gate(); err != nil {
		t.Skip(err)
	}
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv(testenv.EnvRequireReal) == "1" {
			t.Fatalf("%s is not set (%s)", name, how)
		}
		t.Skipf("%s is not set (%s)", name, how)
	}
	return v
}

// run runs a command (bounded by two minutes) and returns its combined output and exit code.
func run(t *testing.T, name string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return out.String(), code
}

// must runs a command that has to succeed.
func must(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, code := run(t, name, args...)
	if code != 0 {
		t.Fatalf("%s %s: exit %d\n%s", name, strings.Join(args, " "), code, out)
	}
	return out
}
