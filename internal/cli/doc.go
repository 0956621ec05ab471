// Package cli implements site-agent's command line: argument parsing, subcommands and exit codes.
// Running a mode (incumbent-compatible -m MODE -c FILE, or every configured mode with -m all,
// optionally only while holding a leader-election lease) parses the flags and hands over to
// internal/agent, which assembles and supervises the agent; the other subcommands are
// diagnostics, load-components, healthz, version, check-config, virtual-clusters
// (internal/vclusters) and a pointer to the demo program. Exit codes are named constants;
// preamble.go is how every subcommand starts (flags, configuration, logger) and how its outcome
// becomes an exit code. Nothing here calls os.Exit: Run returns the code to cmd/site-agent.
package cli
