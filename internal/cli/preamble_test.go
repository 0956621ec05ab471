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
		{"several problems", config.Errors{{Path: "a.yaml", Key: "log_level", Problem: "bad"}, {Path: "a.yaml", Key: "offerings", Problem: "missing"}},
			ExitUsage, "site-agent: invalid configuration in a.yaml: 2 problems\n  log_level: bad\n  offerings: missing\n"},
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

// Every command that reads the configuration refuses the same problems the same way: exit 2, every
// problem at once, each naming its key, before anything is sent.
func TestEveryCommandReportsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("sentry_dsn: https://k@sentry.example/1\nlog_level: LOUD\nreporting_periods: 99\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var first string
	for _, args := range [][]string{
		{"-m", "order_process", "-c", bad, "--once"},
		{"run", "-c", bad},
		{"diagnostics", "-c", bad},
		{"load-components", "-c", bad},
		{"check-config", "-c", bad},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), args, IO{Stdout: &stdout, Stderr: &stderr, Environ: func() []string { return nil }})
		got := stderr.String()
		if code != ExitUsage || !strings.Contains(got, ": 3 problems\n") || !strings.Contains(got, "\n  log_level: ") ||
			!strings.Contains(got, "\n  reporting_periods: ") || !strings.Contains(got, "\n  offerings: ") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and every problem, one a line", args, code, got)
		}
		if first == "" {
			first = got
		} else if got != first {
			t.Errorf("%v reports differently:\n%s\nvs\n%s", args, got, first)
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
