// Package cli implements site-agent's command line: argument parsing, subcommands and exit codes.
// Commands are cobra commands, each with its own flags and help (-h exits 0; a flag it does not
// take is refused with exit 2); `completion` writes bash, zsh and fish scripts.
//
// Running a mode (incumbent-compatible -m MODE -c FILE, or every configured mode with -m all,
// optionally only while holding a leader-election lease) parses the flags and hands over to
// internal/agent, which assembles and supervises the agent; the other commands are check-config,
// diagnostics (probes.go runs every upstream of every offering at once, each under its deadline),
// load-components, load-historical-usage, healthz, version, and pointers to the demo and
// virtual-clusters programs. Called by one of the incumbent's
// console-script names (Main, incumbent.go), the binary is that command.
//
// Every command that reads the configuration validates it as the agent does before it starts
// (preamble.go: config.Load, then agent.Check) and reports every problem at once. Exit codes are
// named constants; nothing here calls os.Exit: Main and Run return the code to the program.
package cli
