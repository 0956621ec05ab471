// Package telemetry holds the agent's observability: the Metrics struct (Prometheus collectors
// on a private registry, passed into constructors — no globals; per-offering series labelled
// by offering UUID and created at start), the Status recorder behind the /status page and
// /status.json (fed by the runner and order processing, read without any upstream call, every
// text scrubbed of secrets), zap logger construction (JSON or text), the incumbent-compatible
// heartbeat file, the HTTP listener serving /metrics, /healthz, /readyz and /status, and the
// feeding of systemd's watchdog while the agent is live. Metric labels never carry secrets or
// unbounded values (no resource or order ids).
package telemetry
