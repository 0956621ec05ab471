package vclusters

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the tool's Prometheus collectors on their own registry (no globals). Labels are
// bounded: statuses, session kinds, results, status classes — never cluster names.
type Metrics struct {
	Registry *prometheus.Registry

	Clusters      *prometheus.GaugeVec   // status
	Connects      *prometheus.CounterVec // session, result (ok, refused, error)
	Reconnects    *prometheus.CounterVec // session: handshakes after a session that was up
	Sessions      *prometheus.GaugeVec   // session: sessions up now
	Dials         *prometheus.CounterVec // session, result (allowed, denied)
	ProxyRequests *prometheus.CounterVec // code (2xx, 3xx, 4xx, 5xx)
	ProxyBytes    *prometheus.CounterVec // direction (in, out)
	ProxyRestarts prometheus.Counter
	Errors        *prometheus.CounterVec // stage (setup, delete, deletion_watch, rancher_registration, drift, pod_resources)
	Setup         prometheus.Histogram   // seconds from accepted to connected
	DriftRepairs  prometheus.Counter
	Deleted       *prometheus.CounterVec // by (api, rancher)
}

// NewMetrics creates and registers the collectors (plus Go and process collectors).
func NewMetrics() *Metrics {
	const ns = "site_agent_vclusters"
	counters := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: name, Help: help}, labels)
	}
	gauges := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: name, Help: help}, labels)
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: name, Help: help})
	}
	m := &Metrics{
		Registry:   prometheus.NewRegistry(),
		Clusters:   gauges("clusters", "Virtual clusters by status.", "status"),
		Connects:   counters("tunnel_connects_total", "Tunnel handshakes by session and result (ok, refused by Rancher, error).", "session", "result"),
		Reconnects: counters("tunnel_reconnects_total", "Successful handshakes that reopened a session that had been up.", "session"),
		Sessions:   gauges("tunnel_sessions", "Tunnel sessions up.", "session"),
		Dials:      counters("tunnel_dials_total", "Connections Rancher asked to open through a tunnel, by allow-function verdict.", "session", "result"),

		ProxyRequests: counters("proxy_requests_total", "Requests through the per-cluster API proxies by status class.", "code"),
		ProxyBytes:    counters("proxy_bytes_total", "Body bytes through the API proxies (in: request bodies, out: response bodies).", "direction"),
		ProxyRestarts: counter("proxy_restarts_total", "API proxies restarted on a new port after their listener failed."),

		Errors: counters("errors_total", "Failures by stage (setup, delete, deletion_watch, rancher_registration, drift, pod_resources).", "stage"),
		Setup: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "setup_duration_seconds",
			Help: "Time from POST /clusters to the first connected agent session.", Buckets: prometheus.ExponentialBuckets(0.1, 2, 12)}),
		DriftRepairs: counter("node_status_repairs_total", "Node statuses re-patched (or Nodes re-created) after drifting from the template."),
		Deleted:      counters("deleted_total", "Virtual clusters removed, through the API or because Rancher deleted them.", "by"),
	}
	m.Registry.MustRegister(m.Clusters, m.Connects, m.Reconnects, m.Sessions, m.Dials, m.ProxyRequests, m.ProxyBytes,
		m.ProxyRestarts, m.Errors, m.Setup, m.DriftRepairs, m.Deleted,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *Metrics) proxied(code int, in, out int64) {
	m.ProxyRequests.WithLabelValues(strconv.Itoa(code/100) + "xx").Inc()
	m.ProxyBytes.WithLabelValues("in").Add(float64(in))
	m.ProxyBytes.WithLabelValues("out").Add(float64(out))
}
