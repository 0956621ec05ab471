package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/modes"
)

type outcome struct {
	code           int
	stdout, stderr string
}

// invoke runs argv (argv[0] is the program name) with no environment.
func invoke(argv ...string) outcome {
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), argv, IO{Stdout: &stdout, Stderr: &stderr, Environ: func() []string { return nil }})
	return outcome{code, stdout.String(), stderr.String()}
}

// Every command's -h and --help exit 0 and list that command's flags only.
func TestHelpListsOnlyTheCommandsFlags(t *testing.T) {
	cases := []struct {
		argv          []string
		want, notWant []string
	}{
		{[]string{"site-agent"}, []string{"--mode", "--config-file", "--once", "--leader-elect", "check-config", "diagnostics", "completion"}, nil},
		{[]string{"site-agent", "run"}, []string{"--mode", "--once", "--leader-elect"}, []string{"diagnostics", "--version"}},
		{[]string{"site-agent", "check-config"}, []string{"--config-file"}, []string{"--once", "--leader-elect", "--mode", "--listen", "--dry-run"}},
		{[]string{"site-agent", "diagnostics"}, []string{"--config-file", "--mode", "--timeout", "--output"}, []string{"--once", "--leader-elect", "--listen"}},
		{[]string{"site-agent", "load-components"}, []string{"--config-file", "--mode"}, []string{"--once", "--leader-elect", "--timeout"}},
		{[]string{"site-agent", "healthz"}, []string{"--config-file", "--max-age", "--liveness-only", "--heartbeat-file"}, []string{"--once", "--mode"}},
		{[]string{"site-agent", "load-historical-usage"}, []string{"--config", "--offering-uuid", "--user-token", "--start-date", "--end-date",
			"--skip-user-usage", "--no-staff-check", "--dry-run", "--reconcile-stale", "--resource-backend-id"}, []string{"--once", "--mode"}},
		{[]string{"site-agent", "version"}, nil, []string{"--config-file", "--once"}},
		{[]string{"waldur_site_diagnostics"}, []string{"waldur_site_diagnostics -c FILE", "--config-file", "--mode"}, []string{"--once", "check-config"}},
		{[]string{"waldur_site_healthz"}, []string{"--config-file", "--max-age", "--liveness-only"}, []string{"--once"}},
		{[]string{"/usr/bin/waldur_site_agent"}, []string{"waldur_site_agent [-m MODE]", "--mode", "--config-file"}, []string{"check-config", "Commands:"}},
		{[]string{"waldur_sync_offering_users"}, []string{"--config-file", "--mode", "one pass of"}, []string{"--leader-elect", "--listen", "--dry-run"}},
	}
	for _, c := range cases {
		for _, help := range []string{"-h", "--help"} {
			argv := append(slices.Clone(c.argv), help)
			r := invoke(argv...)
			if r.code != ExitOK || r.stderr != "" {
				t.Errorf("%v: exit %d, stderr %q", argv, r.code, r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("%v: help lacks %q", argv, w)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(r.stdout, w) {
					t.Errorf("%v: help lists %q, which is not this command's", argv, w)
				}
			}
		}
	}
	if r := invoke("site-agent", "help", "diagnostics"); r.code != ExitOK || !strings.Contains(r.stdout, "--timeout") {
		t.Errorf("help diagnostics: %+v", r)
	}
}

// Unknown or inapplicable flags, unknown commands and stray arguments are refused with exit 2,
// a line saying what, and where the help is.
func TestUnknownAndInapplicableFlagsAreRefused(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "none.yaml")
	cases := []struct {
		argv []string
		want string
	}{
		{[]string{"site-agent", "check-config", "-c", cfg, "--once"}, "unknown flag: --once"},
		{[]string{"site-agent", "check-config", "-c", cfg, "--leader-elect"}, "unknown flag: --leader-elect"},
		{[]string{"site-agent", "diagnostics", "-c", cfg, "--dry-run"}, "unknown flag: --dry-run"},
		{[]string{"site-agent", "healthz", "--mode", "all"}, "unknown flag: --mode"},
		{[]string{"site-agent", "version", "-c", cfg}, "unknown shorthand flag: 'c'"},
		{[]string{"site-agent", "-c", cfg, "--bogus"}, "unknown flag: --bogus"},
		{[]string{"site-agent", "bogus"}, `unknown command "bogus"`},
		{[]string{"site-agent", "diagnostics", "-c", cfg, "--timeout", "soon"}, "--timeout"},
		{[]string{"site-agent", "diagnostics", "-c", cfg, "--output", "xml"}, "--output: want text or json"},
		{[]string{"site-agent", "diagnostics", "-c", cfg, "-m", "sometimes"}, `unknown mode "sometimes"`},
		{[]string{"site-agent", "-m", "sometimes", "-c", cfg}, `unknown mode "sometimes"`},
		{[]string{"site-agent", "-c", cfg, "--once", "--leader-elect"}, "--once cannot be combined with leader election"},
		{[]string{"waldur_sync_resource_limits", "-c", cfg, "--once"}, "unknown flag: --once"},
	}
	for _, c := range cases {
		r := invoke(c.argv...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.argv, r.code, r.stderr, c.want)
		}
	}
}

// completion writes a script for each shell, naming the commands.
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		r := invoke("site-agent", "completion", shell)
		if r.code != ExitOK || !strings.Contains(r.stdout, "site-agent") || len(r.stdout) < 500 {
			t.Errorf("completion %s: exit %d, %d bytes, stderr %q", shell, r.code, len(r.stdout), r.stderr)
		}
	}
	r := invoke("site-agent", "__complete", "diagnostics", "--output", "")
	if r.code != ExitOK || !strings.Contains(r.stdout, "text\njson\n") {
		t.Errorf("dynamic completion of --output: %+v", r)
	}
	r = invoke("site-agent", "__complete", "-m", "")
	for _, m := range append(modes.Names(), modes.ModeAll) {
		if !strings.Contains(r.stdout, m+"\n") {
			t.Errorf("-m completion lacks %s: %q", m, r.stdout)
		}
	}
}

// version prints the stamps, and where a stamp is missing, what the build recorded.
func TestVersion(t *testing.T) {
	r := invoke("site-agent", "version")
	for _, w := range []string{"site-agent dev\n", "  commit:", "  built:", "  go:       go1.", "  platform:"} {
		if r.code != ExitOK || !strings.Contains(r.stdout, w) {
			t.Errorf("version lacks %q: %+v", w, r)
		}
	}
	old := [3]string{Version, Commit, BuildDate}
	defer func() { Version, Commit, BuildDate = old[0], old[1], old[2] }()
	Version, Commit, BuildDate = "1.2.3", "0123abc", "2026-11-26T10:00:00Z"
	r = invoke("site-agent", "version")
	for _, w := range []string{"site-agent 1.2.3\n", "commit:   0123abc", "built:    2026-11-26T10:00:00Z"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("stamped version lacks %q: %s", w, r.stdout)
		}
	}
	for _, args := range [][]string{{"site-agent", "--version"}, {"site-agent", "--version", "extra"}, {"site-agent", "-m", "report", "--version"}} {
		if r := invoke(args...); r.code != ExitOK || !strings.HasPrefix(r.stdout, "site-agent 1.2.3 (commit 0123abc, built 2026-11-26T10:00:00Z, go1.") {
			t.Errorf("%v: %+v", args[1:], r)
		}
	}
}

// Every name the packages link (scripts/release/incumbent-names) is a command; any other name is
// site-agent.
func TestEveryIncumbentNameIsACommand(t *testing.T) {
	data, err := os.ReadFile("../../scripts/release/incumbent-names")
	if err != nil {
		t.Fatal(err)
	}
	a := &app{io: IO{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		name := strings.TrimSpace(strings.SplitN(line, "#", 2)[0])
		if name == "" {
			continue
		}
		n++
		cmd := a.incumbent(name)
		if cmd == nil || cmd.Name() != name {
			t.Errorf("%s: no command answers to it", name)
		}
	}
	if n < 8 {
		t.Fatalf("only %d names in incumbent-names", n)
	}
	for _, spec := range modes.Specs() {
		for _, name := range spec.OnePass {
			if !strings.Contains(string(data), name+"\n") {
				t.Errorf("mode %s answers to %s, which the packages do not link", spec.Name, name)
			}
		}
	}
	if a.incumbent("site-agent") != nil || a.incumbent("waldur_site_create_homedirs") != nil {
		t.Error("only the listed names are incumbent commands")
	}
	r := invoke("waldur_site_test_order", "-c", "x.yaml", "--template", "create/basic.json")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "waldur_site_test_order is not provided by site-agent") {
		t.Errorf("waldur_site_test_order: %+v", r)
	}
	if r := invoke("waldur_site_test_order", "--help"); r.code != ExitOK || !strings.Contains(r.stdout, "--dry-run") {
		t.Errorf("waldur_site_test_order --help: %+v", r)
	}
}

// The historical loader's flags are checked before anything is read: the incumbent's required
// ones, its date format and range limit; --reconcile-stale is refused.
func TestHistoryFlags(t *testing.T) {
	ok := historyFlags{config: "c.yaml", offering: "u", token: "t", start: "2025-11-15", end: "2026-02-01"}
	months, err := ok.check()
	want := []backends.Period{{Year: 2025, Month: time.November}, {Year: 2025, Month: time.December},
		{Year: 2026, Month: time.January}, {Year: 2026, Month: time.February}}
	if err != nil || !slices.Equal(months, want) {
		t.Fatalf("months %v, %v; want %v", months, err, want)
	}
	cases := []struct {
		change func(*historyFlags)
		want   string
	}{
		{func(f *historyFlags) { f.token = "" }, "--user-token is required"},
		{func(f *historyFlags) { f.start = "15.11.2025" }, "--start-date: want YYYY-MM-DD"},
		{func(f *historyFlags) { f.end = "2025-10-31" }, "is before --start-date"},
		{func(f *historyFlags) { f.start = "2019-01-01" }, "at most 1825 (5 years)"},
		{func(f *historyFlags) { f.stale = true }, "--reconcile-stale is not supported"},
	}
	for _, c := range cases {
		f := ok
		c.change(&f)
		if _, err := f.check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
	r := invoke("waldur_site_load_historical_usage", "-c", "x.yaml", "-o", "u", "-t", "tok", "-s", "2025-01-01")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--end-date is required") {
		t.Errorf("missing --end-date: %+v", r)
	}
}

// Command lines of earlier releases keep working: their flag package took long flags with one
// dash too. Shorthands keep argparse's forms (-m all, -mall).
func TestLongFlagsWithOneDash(t *testing.T) {
	a := &app{io: IO{}}
	root := a.root(nil)
	got := longFlagsWithOneDash(root, []string{"-once", "-config-file=x.yaml", "-mode", "all", "-m", "all", "-mall", "-c", "f",
		"--dry-run", "-max-age", "5", "-bogus", "--", "-once"})
	want := []string{"--once", "--config-file=x.yaml", "--mode", "all", "-m", "all", "-mall", "-c", "f",
		"--dry-run", "--max-age", "5", "-bogus", "--", "-once"}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	r := invoke("site-agent", "check-config", "-config-file", filepath.Join(t.TempDir(), "none.yaml"))
	if r.code != ExitUsage || !strings.Contains(r.stderr, "none.yaml: file does not exist") {
		t.Fatalf("check-config -config-file: %+v", r)
	}
}
