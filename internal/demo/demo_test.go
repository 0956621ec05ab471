package demo

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/cli"
)

// TestDemo runs the demo as a user would and checks its story ends well: every order settled,
// the oversized one rejected, and not one request outside Waldur's contract.
func TestDemo(t *testing.T) {
	var out, errs bytes.Buffer
	code := cli.Run(context.Background(), []string{"demo"}, cli.IO{Stdout: &out, Stderr: &errs, Environ: func() []string { return nil }}, Command)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errs.String())
	}
	for _, want := range []string{"orders 5 done, 1 rejected", " 0 contract violations", "members: phys_alice"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestReleaseBinaryPointsToDemo: without the demo command, `demo` names the program that has it.
func TestReleaseBinaryPointsToDemo(t *testing.T) {
	var out, errs bytes.Buffer
	code := cli.Run(context.Background(), []string{"demo"}, cli.IO{Stdout: &out, Stderr: &errs, Environ: func() []string { return nil }})
	if code != cli.ExitUsage || !strings.Contains(errs.String(), "go run ./cmd/site-agent-demo") {
		t.Fatalf("exit %d, stderr %q", code, errs.String())
	}
}
