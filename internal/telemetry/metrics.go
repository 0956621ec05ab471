package telemetry

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the agent's Prometheus collectors, registered on their own registry. Per-offering
// series carry the offering's UUID (offering_uuid, as OfferingLabel writes it); its name is in
// site_agent_offering_info. DeclareOffering and DeclareCycles create an offering's series at
// start, so alerts and rate() work from the first scrape.
type Metrics struct {
	Registry *prometheus.Registry

	Cycles         *prometheus.CounterVec   // mode, offering_uuid, result (ok, error)
	CycleDuration  *prometheus.HistogramVec // mode, offering_uuid
	LastSuccess    *prometheus.GaugeVec     // mode, offering_uuid: unix time of the last good cycle
	LastCycle      *prometheus.GaugeVec     // mode, offering_uuid: unix time the last cycle ended (work start before the first)
	CyclePeriod    *prometheus.GaugeVec     // mode: seconds between cycles
	CycleRunning   *prometheus.GaugeVec     // mode, offering_uuid: seconds the current cycle has run (0 when idle)
	CycleStuck     *prometheus.GaugeVec     // mode, offering_uuid: 1 while a cycle has outlived its timeout
	Orders         *prometheus.CounterVec   // offering_uuid, type, result
	OrdersPending  *prometheus.GaugeVec     // offering_uuid: open orders waiting for the agent
	WaldurRequests *prometheus.CounterVec   // offering_uuid, method, endpoint, code
	WaldurLatency  *prometheus.HistogramVec // method, endpoint
	BackendOps     *prometheus.CounterVec   // backend, operation, result
	BackendLatency *prometheus.HistogramVec // backend, operation
	// UpstreamErrors counts calls that failed transiently after their retries (no answer, 429,
	// 5xx; a backend operation classified transient), per offering and upstream ("waldur" or the
	// backend's name).
	UpstreamErrors *prometheus.CounterVec // offering_uuid, upstream
	UsageReports   *prometheus.CounterVec // offering_uuid, result (sent, unchanged, anomaly, skipped)
	MemberChanges  *prometheus.CounterVec // offering_uuid, action (add, remove)
	ResourceErrors *prometheus.CounterVec // offering_uuid, kind (transient, permanent)
	// BackendDegraded is 1 while a backend works without one of its needs (need="access": the
	// service that grants access, e.g. Keycloak, does not answer, so membership changes wait).
	BackendDegraded *prometheus.GaugeVec   // offering_uuid, need
	OfferingInfo    *prometheus.GaugeVec   // offering_uuid, name: always 1
	Info            *prometheus.GaugeVec   // version, mode
	Leader          prometheus.Gauge       // 1 while this process does the work (always, without leader election)
	LeaderChanges   *prometheus.CounterVec // event (acquired, lost, ended)
	ConfigReloads   *prometheus.CounterVec // result (success, failure)
	Panics          prometheus.Counter

	// Event mode.
	EventConnected   *prometheus.GaugeVec     // offering_uuid, object_type: 1 while subscribed
	EventConnections *prometheus.CounterVec   // offering_uuid, object_type: connections established
	EventMessages    *prometheus.CounterVec   // offering_uuid, object_type, result
	EventHandling    *prometheus.HistogramVec // object_type: receipt → handled
	// EventPassesCoalesced counts asks for a full pass (an offering_user event without backend
	// ids, a forced sync, a listener that reconnected) that a pass already waiting covered.
	EventPassesCoalesced *prometheus.CounterVec // offering_uuid, pass (order, membership)

	runtimeOnce sync.Once
}

const ns = "site_agent"

func counter(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: name, Help: help}, labels)
}

func gauge(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: name, Help: help}, labels)
}

func histogram(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: name, Help: help, Buckets: buckets}, labels)
}

// NewMetrics creates and registers the agent's collectors (Serve adds the Go and process ones).
func NewMetrics() *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry()}
	m.newCycleMetrics()
	m.Orders = counter("orders_total", "Orders handled by type and result (done, erred, rejected, deferred, retry).", "offering_uuid", "type", "result")
	m.OrdersPending = gauge("orders_pending", "Open orders (pending the provider or executing) seen at the last order pass, less those finished since.", "offering_uuid")
	m.WaldurRequests = counter("waldur_requests_total", "Waldur API requests by endpoint template and status code (0 = no response).", "offering_uuid", "method", "endpoint", "code")
	m.WaldurLatency = histogram("waldur_request_duration_seconds", "Waldur API request latency including retries.", prometheus.ExponentialBuckets(0.005, 3, 9), "method", "endpoint")
	m.BackendOps = counter("backend_operations_total", "Backend operations by result (ok, transient, not_found, error).", "backend", "operation", "result")
	m.BackendLatency = histogram("backend_operation_duration_seconds", "Backend operation latency.", prometheus.ExponentialBuckets(0.001, 4, 9), "backend", "operation")
	m.UpstreamErrors = counter("upstream_errors_total", "Calls to an upstream (waldur, or the backend by name) that failed transiently after their retries.", "offering_uuid", "upstream")
	m.UsageReports = counter("usage_reports_total", "Per-resource usage reports by result (sent, unchanged, anomaly, skipped).", "offering_uuid", "result")
	m.MemberChanges = counter("membership_changes_total", "Users added to or removed from backend resources.", "offering_uuid", "action")
	m.ResourceErrors = counter("resource_errors_total", "Per-resource failures in membership and report passes.", "offering_uuid", "kind")
	m.BackendDegraded = gauge("backend_degraded", "1 while the backend works without one of its needs (need=access: membership changes wait).", "offering_uuid", "need")
	m.OfferingInfo = gauge("offering_info", "Always 1; names the offering of an offering_uuid.", "offering_uuid", "name")
	m.Info = gauge("build_info", "Always 1; labels carry the version and mode.", "version", "mode")
	m.Leader = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "leader",
		Help: "1 while this replica works (it holds the lease, or leader election is off); 0 while it stands by."})
	m.LeaderChanges = counter("leader_changes_total", "Leadership terms started (acquired) and ended (lost: the lease could not be renewed; ended: the agent stopped).", "event")
	m.ConfigReloads = counter("config_reloads_total", "Configuration reloads (SIGHUP) by result (success, failure: the running configuration stays).", "result")
	m.Panics = prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "panics_total", Help: "Panics recovered in mode cycles."})
	m.EventConnected = gauge("event_connected", "1 while the event listener of an offering and object type is subscribed.", "offering_uuid", "object_type")
	m.EventConnections = counter("event_connections_total", "Event broker connections established (the first and every reconnect).", "offering_uuid", "object_type")
	m.EventMessages = counter("event_messages_total", "Events received by result (handled, dropped, malformed, failed).", "offering_uuid", "object_type", "result")
	m.EventHandling = histogram("event_handling_duration_seconds", "Time from an event's arrival to the end of its handling.", prometheus.ExponentialBuckets(0.001, 3, 10), "object_type")
	m.EventPassesCoalesced = counter("event_passes_coalesced_total",
		"Asks for a full pass (order or membership) covered by a pass already waiting to start.", "offering_uuid", "pass")
	m.Registry.MustRegister(m.EventConnected, m.EventConnections, m.EventMessages, m.EventHandling, m.EventPassesCoalesced)
	m.Registry.MustRegister(m.Orders, m.OrdersPending, m.WaldurRequests, m.WaldurLatency, m.BackendOps, m.BackendLatency,
		m.UpstreamErrors, m.UsageReports, m.MemberChanges, m.ResourceErrors, m.BackendDegraded, m.OfferingInfo, m.Info, m.Leader,
		m.LeaderChanges, m.ConfigReloads, m.Panics)
	for _, r := range []string{"success", "failure"} {
		m.ConfigReloads.WithLabelValues(r)
	}
	return m
}

func (m *Metrics) newCycleMetrics() {
	m.Cycles = counter("cycles_total", "Mode cycles per offering by result.", "mode", "offering_uuid", "result")
	m.CycleDuration = histogram("cycle_duration_seconds", "Duration of one mode cycle for one offering.", prometheus.ExponentialBuckets(0.01, 4, 9), "mode", "offering_uuid")
	m.LastSuccess = gauge("last_success_timestamp_seconds", "Unix time of the last successful cycle.", "mode", "offering_uuid")
	m.LastCycle = gauge("last_cycle_timestamp_seconds", "Unix time the last cycle ended, whatever its result (before the first: when the work started).", "mode", "offering_uuid")
	m.CyclePeriod = gauge("cycle_period_seconds", "Time between the cycles of a mode (plus up to 5% jitter).", "mode")
	m.CycleRunning = gauge("cycle_running_seconds", "How long the cycle in progress has run (0 when idle).", "mode", "offering_uuid")
	m.CycleStuck = gauge("cycle_stuck", "1 while a cycle has run past its timeout and the stop grace (it ignores cancellation).", "mode", "offering_uuid")
	m.Registry.MustRegister(m.Cycles, m.CycleDuration, m.LastSuccess, m.LastCycle, m.CyclePeriod, m.CycleRunning, m.CycleStuck)
}

// registerRuntime adds the Go runtime and process collectors. Serve calls it: they are only
// worth building (a few hundred kilobytes touched at start) when someone can scrape them.
func (m *Metrics) registerRuntime() {
	m.runtimeOnce.Do(func() {
		m.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	})
}
