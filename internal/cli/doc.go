// Package cli implements site-agent's command line: running a mode (incumbent-compatible
// -m MODE -c FILE, or every configured mode with -m all, optionally only while holding a
// leader-election lease), diagnostics, load-components, healthz, version, check-config,
// and pointers to the demo and virtual-clusters programs.
// Exit codes are named constants; preamble.go is how every subcommand starts (flags,
// configuration, logger) and how its outcome becomes an exit code; wire.go is the one place
// that assembles an agent from a configuration. Nothing here calls os.Exit: Run returns the code
// to cmd/site-agent.
package cli
