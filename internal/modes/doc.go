// Package modes runs the agent's work: one Runner (ticker with jitter, per-offering isolation,
// bounded concurrency, timeouts, panic recovery, heartbeat and cycle metrics) drives a Mode's
// RunOnce for every configured offering. The modes are order processing, membership sync and
// usage reporting; each is fetch → plan (pure functions in plan.go) → apply → report. The
// event mode (eventmode*.go) is a Listener the Runner also starts once per offering: it turns
// Waldur's events into the same work through small entry points (Orders.ProcessOrder,
// Membership.SyncResources), with orders and resources serialised per resource (locks.go), and
// its RunOnce is the reconciliation.
//
// The mode registry (registry.go) is a Spec per mode: its name (ModeOrderProcess, …), default
// period and the incumbent's variable for it, the configuration key naming its backend, the role
// that backend must play, which offerings run it and how its Runner is built. The agent starts
// modes from the registry alone: adding a mode means adding a Spec here and its keys to
// internal/config.
//
// Runner.Run stops gracefully when its context is cancelled (work in flight gets a grace period)
// and at once when its fence is cancelled (a leader that lost its lease writes nothing more).
//
// Modes translate Waldur objects into backend domain types; backends never see Waldur. A mode
// never marks an order or resource erred because of a transient failure: those are retried on
// the next cycle. Only cmd/site-agent exits the process.
package modes
