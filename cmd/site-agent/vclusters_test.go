package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/cli"
)

// The old subcommand name points to the program that now runs virtual clusters.
func TestVirtualClustersSubcommandPointsToItsProgram(t *testing.T) {
	var out, errOut bytes.Buffer
	code := cli.Run(context.Background(), []string{"virtual-clusters", "--rancher-url", "https://x.example"},
		cli.IO{Stdout: &out, Stderr: &errOut, Environ: func() []string { return nil }})
	if code != cli.ExitUsage || !strings.Contains(errOut.String(), "go run ./cmd/site-agent-vclusters") || out.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}
