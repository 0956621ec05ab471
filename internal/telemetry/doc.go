// Package telemetry holds the agent's observability: the Metrics struct (Prometheus collectors
// on a private registry, passed into constructors — no globals), zap logger construction, the
// incumbent-compatible heartbeat file, the HTTP listener serving /metrics, /healthz and
// /readyz, and the feeding of systemd's watchdog while the agent is live. Metric labels never
// carry secrets or unbounded values (no resource or order ids).
package telemetry
