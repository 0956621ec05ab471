package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit codes.
const (
	ExitOK      = 0 // success
	ExitFailure = 1 // a run, check or command failed
	ExitUsage   = 2 // bad flags or invalid configuration; nothing was sent anywhere
)

// Stamped at build time (-ldflags "-X github.com/waldur/site-agent/internal/cli.Version=…", and
// likewise Commit and BuildDate); what is left empty comes from the binary's build information
// (version.go).
var (
	Version   = "dev"
	Commit    = ""
	BuildDate = ""
)

// userAgent is what a one-off command sends to Waldur: site-agent-<command>/<version>.
func userAgent(command string) string { return "site-agent-" + command + "/" + Version }

// IO bundles the process's standard streams and environment.
type IO struct {
	Stdout  io.Writer
	Stderr  io.Writer
	Environ func() []string
}

// Command is a subcommand that a wrapping program adds to the command line (the demo program adds
// `demo`); the release binary has none. It parses its own arguments, -h included.
type Command struct {
	Name  string
	Usage string // one line for the usage text
	Run   func(ctx context.Context, args []string, io IO) int
}

// Run executes the command line args (without the program name) as site-agent and returns the
// exit code.
func Run(ctx context.Context, args []string, io IO, extra ...Command) int {
	a := &app{io: io}
	return a.execute(ctx, a.root(extra), args)
}

// Main executes a whole argv. Called by one of the incumbent's console-script names (the base
// name of argv[0]; the packages, `make install` and the image install them as links), the binary
// is that command, with its flags (incumbent.go); otherwise it is site-agent.
func Main(ctx context.Context, argv []string, io IO, extra ...Command) int {
	if len(argv) == 0 {
		return Run(ctx, nil, io, extra...)
	}
	a := &app{io: io}
	if cmd := a.incumbent(filepath.Base(argv[0])); cmd != nil {
		return a.execute(ctx, cmd, argv[1:])
	}
	return a.execute(ctx, a.root(extra), argv[1:])
}

// app is one execution of the command line: the streams and the exit code the command chose.
type app struct {
	io   IO
	code int
}

// do turns a command body that returns an exit code into cobra's RunE.
func (a *app) do(body func(cmd *cobra.Command, args []string) int) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		a.code = body(cmd, args)
		return nil
	}
}

// execute runs cmd over args. An error cobra returns is a usage problem (unknown command or
// flag, a missing value, an argument where none is taken): it is printed with a pointer to the
// help, and the exit code is 2. -h and --help print the help and exit 0.
func (a *app) execute(ctx context.Context, cmd *cobra.Command, args []string) int {
	if args == nil {
		args = []string{} // cobra reads os.Args when given nil
	}
	cmd.SetArgs(longFlagsWithOneDash(cmd, args))
	cmd.SetOut(a.io.Stdout)
	cmd.SetErr(a.io.Stderr)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	failed, err := cmd.ExecuteContextC(ctx)
	if err != nil {
		fmt.Fprintf(a.io.Stderr, "%s: %v\nRun '%s --help' for usage.\n", cmd.Name(), err, failed.CommandPath())
		return ExitUsage
	}
	return a.code
}

// longFlagsWithOneDash keeps the command lines of earlier releases working, whose flag package
// took long flags with one dash as well (-once, -config-file FILE): an argument that is one dash
// and a long flag name of the command tree (with or without =value) gets its second dash.
// Shorthands (-m all, -mall, -c FILE) are not long names and stay as they are.
func longFlagsWithOneDash(root *cobra.Command, args []string) []string {
	long := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { long[f.Name] = len(f.Name) > 1 })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if a == "--" {
			copy(out[i:], args[i:])
			break
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "=")
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && long[name] {
			out[i] = "-" + a
		}
	}
	return out
}

// noArgs refuses positional arguments (every command takes flags only).
func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected argument %q", args[0])
	}
	return nil
}

// passthrough is a command that parses its own arguments (-h included): the wrapping program's
// extra commands.
func (a *app) passthrough(name, short string, run func(ctx context.Context, args []string) int) *cobra.Command {
	return &cobra.Command{Use: name, Short: short, DisableFlagParsing: true,
		RunE: a.do(func(cmd *cobra.Command, args []string) int { return run(cmd.Context(), args) })}
}

// errUsage is a command-line or configuration problem: exit code 2.
type errUsage struct{ err error }

func (e errUsage) Error() string { return e.err.Error() }
func (e errUsage) Unwrap() error { return e.err }

// usageErr marks err as a usage problem (exit code 2).
func usageErr(err error) error { return errUsage{err} }
