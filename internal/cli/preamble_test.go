package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/config"
)

func TestExitCodeMapping(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"success", nil, ExitOK, ""},
		{"usage problem", usageErr(errors.New("unknown mode")), ExitUsage, "site-agent: unknown mode\n"},
		{"invalid configuration", &config.Error{Path: "a.yaml", Key: "log_level", Problem: "bad"}, ExitUsage, "site-agent: invalid configuration in a.yaml: log_level: bad\n"},
		{"failure", errors.New("cycle failed"), ExitFailure, "site-agent: cycle failed\n"},
		{"failure already reported", errReported, ExitFailure, ""},
		{"usage already reported", errUsageReported, ExitUsage, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := exitCode(IO{Stderr: &stderr}, tc.err); code != tc.code || stderr.String() != tc.stderr {
				t.Fatalf("exit %d, stderr %q; want %d, %q", code, stderr.String(), tc.code, tc.stderr)
			}
		})
	}
}

// Every subcommand refuses the same problems the same way: exit 2, one line naming the key,
// before its body runs.
func TestPreambleSharedBySubcommands(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("sentry_dsn: https://k@sentry.example/1\nlog_level: LOUD\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-m", "order_process", "-c", bad, "--once"},
		{"diagnostics", "-c", bad},
		{"load-components", "-c", bad},
		{"check-config", "-c", bad},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), args, IO{Stdout: &stdout, Stderr: &stderr, Environ: func() []string { return nil }})
		if code != ExitUsage || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "log_level") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming log_level", args, code, stderr.String())
		}
		if args[0] == "check-config" && !strings.Contains(stdout.String(), "warning: sentry_dsn") {
			t.Errorf("check-config lists warnings even for an invalid file, got %q", stdout.String())
		}
	}
	var stderr bytes.Buffer
	if code := Run(context.Background(), []string{"diagnostics", "-c", bad, "extra"}, IO{Stdout: &bytes.Buffer{}, Stderr: &stderr, Environ: func() []string { return nil }}); code != ExitUsage || !strings.Contains(stderr.String(), `unexpected argument "extra"`) {
		t.Errorf("positional argument: exit %d, %q", code, stderr.String())
	}
}
