// Package telemetry holds the agent's observability: the Metrics struct (Prometheus collectors
// on a private registry, passed into constructors — no globals), zap logger construction, the
// incumbent-compatible heartbeat file, and the HTTP listener serving /metrics, /healthz and
// /readyz. Metric labels never carry secrets or unbounded values (no resource or order ids).
package telemetry
