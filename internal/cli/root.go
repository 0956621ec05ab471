package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/waldur/site-agent/internal/modes"
)

const rootLong = `site-agent connects a provider's infrastructure to the Waldur marketplace.

Without a command it runs a mode (default %s) for every offering of the configuration
file, as the incumbent's waldur_site_agent did, or with -m all every mode the offerings
configure, in one process (one Waldur client per offering, shared backends).
Modes: %s.
With --leader-elect, of several replicas only the holder of a Kubernetes Lease works.

The binary also answers to the incumbent's command names (waldur_site_diagnostics,
waldur_site_healthz, …) when it is called by them.
The demo (the whole loop against a built-in Waldur simulator) is a separate program that links
the simulator: go run ./cmd/site-agent-demo`

// root is site-agent's command line: the agent itself (-m MODE -c FILE) and its subcommands,
// plus the wrapping program's extra commands.
func (a *app) root(extra []Command) *cobra.Command {
	root := a.agentCommand("site-agent [-m MODE] [-c FILE] [flags]", true)
	root.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 && !wantVersion(c) { // --version wins over arguments, as it did with cobra's
			return fmt.Errorf("unknown command %q", args[0])
		}
		return nil
	}
	root.AddGroup(&cobra.Group{ID: "agent", Title: "Commands:"})
	for _, c := range a.commands() {
		c.GroupID = "agent"
		root.AddCommand(c)
	}
	names := map[string]bool{}
	for _, c := range extra {
		names[c.Name] = true
		root.AddCommand(a.passthrough(c.Name, strings.TrimSpace(usageSummary(c.Usage)), func(ctx context.Context, args []string) int {
			return c.Run(ctx, args, a.io)
		}))
	}
	if !names["demo"] {
		root.AddCommand(a.pointer("demo", "the demo is a separate program (it links the Waldur simulator, which the release binary leaves out): go run ./cmd/site-agent-demo"))
	}
	root.SetHelpCommandGroupID("agent")
	root.SetCompletionCommandGroupID("agent")
	return root
}

// agentCommand is the agent itself: -m MODE -c FILE and the run flags (site-agent without a
// command, `site-agent run`, and the incumbent's waldur_site_agent); a top-level one has
// --version.
func (a *app) agentCommand(use string, top bool) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   use,
		Short: "run a mode (the same as site-agent without a command)",
		Args:  noArgs,
		RunE:  a.do(func(cmd *cobra.Command, _ []string) int { return a.runAgent(cmd.Context(), f) }),
	}
	f.register(cmd)
	if top {
		cmd.Short = "connect a provider's infrastructure to the Waldur marketplace"
		cmd.Long = fmt.Sprintf(rootLong, modes.ModeOrderProcess, strings.Join(modes.Names(), ", "))
		// --version is this command's flag, not cobra's (cmd.Version stays empty): cobra would print
		// it through a Go template, and executing one makes the linker keep every exported method
		// of the program (golang/go#62257).
		cmd.Flags().Bool("version", false, "print the version and exit (the version command says more)") // no -v
		run := cmd.RunE
		cmd.RunE = func(c *cobra.Command, args []string) error {
			if wantVersion(c) {
				fmt.Fprintln(c.OutOrStdout(), c.Name()+" "+versionLine())
				return nil
			}
			return run(c, args)
		}
	}
	return cmd
}

// wantVersion reports whether --version was given.
func wantVersion(c *cobra.Command) bool {
	v, err := c.Flags().GetBool("version")
	return err == nil && v
}

// commands are the subcommands of the release binary.
func (a *app) commands() []*cobra.Command {
	run := a.agentCommand("run [-m MODE] [-c FILE] [flags]", false)
	vc := a.pointer("virtual-clusters", "virtual clusters are a separate program (it links remotedialer, which the release binary leaves out): go run ./cmd/site-agent-vclusters")
	return []*cobra.Command{run, a.diagnosticsCommand("diagnostics"), a.loadComponentsCommand("load-components"),
		a.checkConfigCommand(), a.healthzCommand("healthz"), a.historyCommand("load-historical-usage"), vc, a.versionCommand()}
}

// pointer answers a command the release binary leaves to a program of its own (`demo`, which
// links the Waldur simulator; `virtual-clusters`, which links remotedialer): exit 2 naming it.
func (a *app) pointer(name, why string) *cobra.Command {
	return &cobra.Command{Use: name, Hidden: true, DisableFlagParsing: true, RunE: a.do(func(*cobra.Command, []string) int {
		fmt.Fprintln(a.io.Stderr, "site-agent: "+why)
		return ExitUsage
	})}
}

// usageSummary is the description part of an extra command's usage line ("name [flags]   what it
// does"), or the whole line.
func usageSummary(usage string) string {
	if i := strings.Index(usage, "   "); i >= 0 {
		return usage[i:]
	}
	return usage
}
