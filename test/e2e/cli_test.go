package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The built binary's command line: -h and --help exit 0 on every command and list that command's
// flags only; flags a command does not take are refused with exit 2; completion scripts for
// bash, zsh and fish.
func TestCommandLineHelpFlagsAndCompletion(t *testing.T) {
	e := &env{t: t}
	for _, cmd := range [][]string{{}, {"run"}, {"check-config"}, {"diagnostics"}, {"load-components"}, {"healthz"},
		{"load-historical-usage"}, {"version"}, {"completion"}, {"completion", "bash"}, {"help"}} {
		for _, help := range []string{"-h", "--help"} {
			r := e.run(append(cmd, help)...)
			if r.code != 0 {
				t.Errorf("%v %s: %s", cmd, help, r)
			}
			if len(cmd) > 0 && cmd[0] == "check-config" && (strings.Contains(r.stdout, "--once") || strings.Contains(r.stdout, "--leader-elect")) {
				t.Errorf("check-config's help lists the agent's flags:\n%s", r.stdout)
			}
		}
	}
	cfg := filepath.Join(t.TempDir(), "none.yaml")
	for _, args := range [][]string{
		{"check-config", "-c", cfg, "--once"},
		{"check-config", "-c", cfg, "--leader-elect"},
		{"diagnostics", "-c", cfg, "--period", "1m"},
		{"healthz", "--once"},
		{"-c", cfg, "--bogus-flag"},
		{"no-such-command"},
	} {
		if r := e.run(args...); r.code != 2 || !strings.Contains(r.stderr, "--help' for usage") {
			t.Errorf("%v: want exit 2 and a pointer to the help: %s", args, r)
		}
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		if r := e.run("completion", shell); r.code != 0 || !strings.Contains(r.stdout, "site-agent") {
			t.Errorf("completion %s: %s", shell, r)
		}
	}
}

// version prints the stamps; a build without them (go build, go install) takes the commit and
// its time from the build information.
func TestVersionFromStampsAndBuildInfo(t *testing.T) {
	e := &env{t: t}
	r := e.run("version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "site-agent dev\n") || !strings.Contains(r.stdout, "\n  go:       go1.") {
		t.Fatalf("version: %s", r)
	}
	bin := filepath.Join(t.TempDir(), "site-agent")
	const pkg = "github.com/waldur/site-agent/internal/cli"
	build := exec.Command("go", "build", "-buildvcs=auto", "-o", bin,
		"-ldflags", "-X "+pkg+".Version=9.8.7 -X "+pkg+".BuildDate=2026-11-26T12:00:00Z", "github.com/waldur/site-agent/cmd/site-agent")
	build.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	if !strings.HasPrefix(text, "site-agent 9.8.7\n") || !strings.Contains(text, "built:    2026-11-26T12:00:00Z") {
		t.Fatalf("stamped version:\n%s", text)
	}
	// What the go command recorded (nothing where it cannot read the repository: an exported
	// tree, or a git worktree, whose .git is a file the go command does not recognise).
	info, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	_, rev, found := strings.Cut(string(info), "vcs.revision=")
	if !found {
		t.Logf("the build recorded no vcs.revision here; the fallback is checked where it does")
		return
	}
	rev = strings.Fields(rev)[0]
	if want := "commit:   " + rev; !strings.Contains(text, want) {
		t.Fatalf("version lacks %q (vcs.revision of the build information):\n%s", want, text)
	}
}
