// Package demo is the `demo` subcommand of the demo program (cmd/site-agent-demo): the whole loop —
// orders, membership, usage — against the Waldur simulator on loopback with the in-memory backend,
// narrated, or (--serve) the seeded simulator standalone for a hand-run agent.
//
// It links the simulators and their OpenAPI validator, so the release binary (cmd/site-agent) must
// never import it; cmd/site-agent's dependency test enforces that. It runs passes through
// internal/agent (RunOnceWithBackend) and adds its subcommand through cli.Run.
package demo
