package telemetry

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the agent's Prometheus collectors, registered on their own registry.
type Metrics struct {
	Registry *prometheus.Registry

	Cycles         *prometheus.CounterVec   // mode, offering, result (ok, error)
	CycleDuration  *prometheus.HistogramVec // mode, offering
	LastSuccess    *prometheus.GaugeVec     // mode, offering: unix time of the last good cycle
	CycleRunning   *prometheus.GaugeVec     // mode, offering: seconds the current cycle has run (0 when idle)
	CycleStuck     *prometheus.GaugeVec     // mode, offering: 1 while a cycle has outlived its timeout
	Orders         *prometheus.CounterVec   // offering, type, result
	WaldurRequests *prometheus.CounterVec   // offering, method, endpoint, code
	WaldurLatency  *prometheus.HistogramVec // method, endpoint
	BackendOps     *prometheus.CounterVec   // backend, operation, result
	BackendLatency *prometheus.HistogramVec // backend, operation
	UsageReports   *prometheus.CounterVec   // offering, result (sent, unchanged, anomaly, skipped)
	MemberChanges  *prometheus.CounterVec   // offering, action (add, remove)
	ResourceErrors *prometheus.CounterVec   // offering, kind (transient, permanent)
	// BackendDegraded is 1 while a backend works without one of its needs (need="access": the
	// service that grants access, e.g. Keycloak, does not answer, so membership changes wait).
	BackendDegraded *prometheus.GaugeVec   // offering, need
	Info            *prometheus.GaugeVec   // version, mode
	Leader          prometheus.Gauge       // 1 while this process does the work (always, without leader election)
	LeaderChanges   *prometheus.CounterVec // event (acquired, lost, ended)
	Panics          prometheus.Counter

	// Event mode.
	EventConnected   *prometheus.GaugeVec     // offering, object_type: 1 while subscribed
	EventConnections *prometheus.CounterVec   // offering, object_type: connections established
	EventMessages    *prometheus.CounterVec   // offering, object_type, result
	EventHandling    *prometheus.HistogramVec // object_type: receipt → handled

	runtimeOnce sync.Once
}

// NewMetrics creates and registers the agent's collectors (Serve adds the Go and process ones).
func NewMetrics() *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry()}
	ns := "site_agent"
	m.Cycles = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "cycles_total",
		Help: "Mode cycles per offering by result."}, []string{"mode", "offering", "result"})
	m.CycleDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "cycle_duration_seconds",
		Help: "Duration of one mode cycle for one offering.", Buckets: prometheus.ExponentialBuckets(0.01, 4, 9)}, []string{"mode", "offering"})
	m.LastSuccess = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "last_success_timestamp_seconds",
		Help: "Unix time of the last successful cycle."}, []string{"mode", "offering"})
	m.CycleRunning = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "cycle_running_seconds",
		Help: "How long the cycle in progress has run (0 when idle)."}, []string{"mode", "offering"})
	m.CycleStuck = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "cycle_stuck",
		Help: "1 while a cycle has run past its timeout and the stop grace (it ignores cancellation)."}, []string{"mode", "offering"})
	m.Orders = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "orders_total",
		Help: "Orders handled by type and result (done, erred, rejected, deferred, retry)."}, []string{"offering", "type", "result"})
	m.WaldurRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "waldur_requests_total",
		Help: "Waldur API requests by endpoint template and status code (0 = no response)."}, []string{"offering", "method", "endpoint", "code"})
	m.WaldurLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "waldur_request_duration_seconds",
		Help: "Waldur API request latency including retries.", Buckets: prometheus.ExponentialBuckets(0.005, 3, 9)}, []string{"method", "endpoint"})
	m.BackendOps = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "backend_operations_total",
		Help: "Backend operations by result (ok, transient, error)."}, []string{"backend", "operation", "result"})
	m.BackendLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "backend_operation_duration_seconds",
		Help: "Backend operation latency.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 9)}, []string{"backend", "operation"})
	m.UsageReports = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "usage_reports_total",
		Help: "Per-resource usage reports by result (sent, unchanged, anomaly, skipped)."}, []string{"offering", "result"})
	m.MemberChanges = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "membership_changes_total",
		Help: "Users added to or removed from backend resources."}, []string{"offering", "action"})
	m.ResourceErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "resource_errors_total",
		Help: "Per-resource failures in membership and report passes."}, []string{"offering", "kind"})
	m.BackendDegraded = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "backend_degraded",
		Help: "1 while the backend works without one of its needs (need=access: membership changes wait)."}, []string{"offering", "need"})
	m.Info = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "build_info",
		Help: "Always 1; labels carry the version and mode."}, []string{"version", "mode"})
	m.Leader = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "leader",
		Help: "1 while this replica works (it holds the lease, or leader election is off); 0 while it stands by."})
	m.LeaderChanges = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "leader_changes_total",
		Help: "Leadership terms started (acquired) and ended (lost: the lease could not be renewed; ended: the agent stopped)."}, []string{"event"})
	m.Panics = prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "panics_total",
		Help: "Panics recovered in mode cycles."})
	m.EventConnected = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "event_connected",
		Help: "1 while the event listener of an offering and object type is subscribed."}, []string{"offering", "object_type"})
	m.EventConnections = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "event_connections_total",
		Help: "Event broker connections established (the first and every reconnect)."}, []string{"offering", "object_type"})
	m.EventMessages = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "event_messages_total",
		Help: "Events received by result (handled, dropped, malformed, failed)."}, []string{"offering", "object_type", "result"})
	m.EventHandling = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "event_handling_duration_seconds",
		Help: "Time from an event's arrival to the end of its handling.", Buckets: prometheus.ExponentialBuckets(0.001, 3, 10)}, []string{"object_type"})
	m.Registry.MustRegister(m.EventConnected, m.EventConnections, m.EventMessages, m.EventHandling)
	m.Registry.MustRegister(m.Cycles, m.CycleDuration, m.LastSuccess, m.CycleRunning, m.CycleStuck, m.Orders, m.WaldurRequests,
		m.WaldurLatency, m.BackendOps, m.BackendLatency, m.UsageReports, m.MemberChanges, m.ResourceErrors, m.BackendDegraded,
		m.Info, m.Leader, m.LeaderChanges, m.Panics)
	return m
}

// registerRuntime adds the Go runtime and process collectors. Serve calls it: they are only
// worth building (a few hundred kilobytes touched at start) when someone can scrape them.
func (m *Metrics) registerRuntime() {
	m.runtimeOnce.Do(func() {
		m.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	})
}
