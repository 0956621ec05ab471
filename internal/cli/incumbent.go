package cli

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/waldur/site-agent/internal/modes"
)

// The incumbent's console scripts (waldur-site-agent's pyproject.toml, [project.scripts]); the
// packages, `make install` and the image link them to the binary (scripts/release/incumbent-names).
const (
	incumbentAgent       = "waldur_site_agent"                 // waldur_site_agent.main:main
	incumbentDiagnostics = "waldur_site_diagnostics"           // waldur_site_agent.common.utils:diagnostics
	incumbentHealthz     = "waldur_site_healthz"               // waldur_site_agent.common.healthz:cli
	incumbentComponents  = "waldur_site_load_components"       // waldur_site_agent.common.utils:load_offering_components
	incumbentHistory     = "waldur_site_load_historical_usage" // waldur_site_agent.common.historical_usage_loader:main
	incumbentTestOrder   = "waldur_site_test_order"            // waldur_site_agent.testing.cli:main
)

// testOrderWhy says why waldur_site_test_order has no counterpart.
const testOrderWhy = `waldur_site_test_order is not provided by site-agent: it fed order templates through the
Python agent's plugin test harness and mock backends, which site-agent does not have. To see what
the agent would do with an offering's pending orders without changing anything, run
  site-agent -c FILE --once --dry-run
and to watch the whole loop against a built-in Waldur simulator, run the separate demo program
(go run ./cmd/site-agent-demo).`

// incumbent returns the command the binary is when called by one of the incumbent's console-script
// names, with that command's flags (each cites where the incumbent defines them), or nil for any
// other name. The one-pass scripts are taken from the mode registry (modes.Spec.OnePass).
func (a *app) incumbent(name string) *cobra.Command {
	switch name {
	case incumbentAgent:
		return a.agentCommand(name+" [-m MODE] [-c FILE] [flags]", true)
	case incumbentDiagnostics:
		return a.diagnosticsCommand(name)
	case incumbentHealthz:
		return a.healthzCommand(name)
	case incumbentComponents:
		return a.loadComponentsCommand(name)
	case incumbentHistory:
		return a.historyCommand(name)
	case incumbentTestOrder:
		return a.notProvided(name, testOrderWhy)
	}
	for _, spec := range modes.Specs() {
		if slices.Contains(spec.OnePass, name) {
			return a.onePassCommand(name, spec)
		}
	}
	return nil
}

// onePassCommand is an incumbent script whose job is one pass of a mode over every offering,
// with the incumbent's flags (-m and -c: init_configuration in
// waldur_site_agent/common/utils.py; its -m only named the user agent).
func (a *app) onePassCommand(name string, spec modes.Spec) *cobra.Command {
	f := &oneOffFlags{}
	cmd := &cobra.Command{Use: name + " -c FILE", Args: noArgs,
		Short: fmt.Sprintf("one pass of %s over every offering (site-agent -m %s -c FILE --once)", spec.Name, spec.Name)}
	f.register(cmd)
	cmd.RunE = a.do(func(cmd *cobra.Command, _ []string) int {
		if err := checkMode(f.mode); err != nil {
			return exitCode(a.io, usageErr(err))
		}
		return a.runAgent(cmd.Context(), &runFlags{mode: spec.Name, configFile: f.configFile, once: true})
	})
	return cmd
}

// notProvided is an incumbent script the product has no counterpart for: -h explains why and
// exits 0, anything else says the same on stderr and exits 2.
func (a *app) notProvided(name, why string) *cobra.Command {
	return &cobra.Command{Use: name, Short: "not provided by site-agent", DisableFlagParsing: true,
		RunE: a.do(func(_ *cobra.Command, args []string) int {
			if slices.Contains(args, "-h") || slices.Contains(args, "--help") {
				fmt.Fprintln(a.io.Stdout, why)
				return ExitOK
			}
			fmt.Fprintln(a.io.Stderr, why)
			return ExitUsage
		})}
}
