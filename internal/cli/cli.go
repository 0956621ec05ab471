package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// Exit codes.
const (
	ExitOK      = 0 // success
	ExitFailure = 1 // a run, check or command failed
	ExitUsage   = 2 // bad flags or invalid configuration; nothing was sent anywhere
)

// Version is stamped at build time (-ldflags "-X github.com/waldur/site-agent/internal/cli.Version=…").
var Version = "dev"

// IO bundles the process's standard streams and environment.
type IO struct {
	Stdout  io.Writer
	Stderr  io.Writer
	Environ func() []string
}

const usage = `site-agent connects a provider's infrastructure to the Waldur marketplace.

Usage:
  site-agent [-m MODE] [-c FILE] [--once] [--dry-run] [--listen ADDR] [--leader-elect]
                                               run a mode (default order_process), or -m all
  site-agent diagnostics -c FILE [-m MODE]     check Waldur access and backends for every offering
  site-agent load-components -c FILE           create or update offering components in Waldur
  site-agent check-config -c FILE              validate the configuration file and show warnings
  site-agent healthz [--config-file FILE] [--max-age SECONDS] [--liveness-only]
  site-agent version
%s
Modes: order_process, membership_sync, report, event_process; all runs every mode the offerings configure in
one process (one Waldur client per offering, shared backends). --leader-elect: of several
replicas only the holder of a Kubernetes Lease works.
Run 'site-agent COMMAND -h' for a command's flags.
The demo (the whole loop against a built-in Waldur simulator) is a separate program that links
the simulator: go run ./cmd/site-agent-demo
`

// Command is a subcommand that a wrapping program adds to the command line (the demo program adds
// `demo`); the release binary has none.
type Command struct {
	Name  string
	Usage string // one line for the usage text
	Run   func(ctx context.Context, args []string, io IO) int
}

// Run executes the command line args (without the program name) and returns the exit code.
func Run(ctx context.Context, args []string, io IO, extra ...Command) int {
	if len(args) > 0 {
		for _, c := range extra {
			if args[0] == c.Name {
				return c.Run(ctx, args[1:], io)
			}
		}
		switch args[0] {
		case "run":
			return runCmd(ctx, args[1:], io)
		case "diagnostics":
			return diagnosticsCmd(ctx, args[1:], io)
		case "load-components":
			return loadComponentsCmd(ctx, args[1:], io)
		case "check-config":
			return checkConfigCmd(args[1:], io)
		case "healthz":
			return healthzCmd(ctx, args[1:], io)
		case "virtual-clusters":
			fmt.Fprintln(io.Stderr, "site-agent: virtual clusters are a separate program (it links remotedialer, which the release binary leaves out): go run ./cmd/site-agent-vclusters")
			return ExitUsage
		case "demo":
			fmt.Fprintln(io.Stderr, "site-agent: the demo is a separate program (it links the Waldur simulator, which the release binary leaves out): go run ./cmd/site-agent-demo")
			return ExitUsage
		case "version", "--version":
			fmt.Fprintf(io.Stdout, "site-agent %s\n", Version)
			return ExitOK
		case "help", "-h", "--help":
			fmt.Fprint(io.Stdout, usageText(extra))
			return ExitOK
		}
		if !strings.HasPrefix(args[0], "-") {
			fmt.Fprintf(io.Stderr, "site-agent: unknown command %q\n\n%s", args[0], usageText(extra))
			return ExitUsage
		}
	}
	return runCmd(ctx, args, io)
}

func usageText(extra []Command) string {
	lines := ""
	for _, c := range extra {
		lines += "  " + c.Usage + "\n"
	}
	return fmt.Sprintf(usage, lines)
}
