// Package agent assembles an agent from a configuration and supervises it: the composition root
// and the process's supervisor.
//
// Build is the one place that turns a validated configuration into running parts: the backend
// registry (Backends — adding a backend means adding a line there), one backend instance per
// offering and backend name shared by the modes, one Waldur client per offering, the Vault
// secret store and resolver (the adapters from the clients to config.Resolver and
// backends.SecretStore live here, so that no client imports the configuration or the backends),
// and one modes.Runner per mode that some offering runs, taken from the mode registry in
// internal/modes (this package names no mode). Build makes no network call; its errors are
// configuration errors.
//
// Supervise runs an agent: it serves /metrics, /healthz and /readyz, swaps in a freshly built
// agent on SIGHUP (keeping the running one when the new configuration is invalid) and, with a
// leader elector (NewElector), works only while this replica holds the Lease.
//
// It parses no arguments and knows no subcommands or exit codes (internal/cli), and it never exits
// the process.
package agent
