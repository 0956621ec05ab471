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
	Errors        *prometheus.CounterVec // stage (setup, delete, deletion_watch, drift, pod_resources)
	Setup         prometheus.Histogram   // seconds from accepted to connected
	DriftRepairs  prometheus.Counter
	Deleted       *prometheus.CounterVec // by (api, rancher)
}

// NewMetrics creates and registers the collectors (plus Go and process collectors).
func NewMetrics() *Metrics {
	ns := "site_agent_vclusters"
	m := &Metrics{Registry: prometheus.NewRegistry()}
	m.Clusters = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "clusters",
		Help: "Virtual clusters by status."}, []string{"status"})
	m.Connects = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "tunnel_connects_total",
		Help: "Tunnel handshakes by session and result (ok, refused by Rancher, error)."}, []string{"session", "result"})
	m.Reconnects = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "tunnel_reconnects_total",
		Help: "Successful handshakes that reopened a session that had been up."}, []string{"session"})
	m.Sessions = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "tunnel_sessions",
		Help: "Tunnel sessions up."}, []string{"session"})
	m.Dials = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "tunnel_dials_total",
		Help: "Connections Rancher asked to open through a tunnel, by allow-function verdict."}, []string{"session", "result"})
	m.ProxyRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "proxy_requests_total",
		Help: "Requests through the per-cluster API proxies by status class."}, []string{"code"})
	m.ProxyBytes = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "proxy_bytes_total",
		Help: "Body bytes through the API proxies (in: request bodies, out: response bodies)."}, []string{"direction"})
	m.ProxyRestarts = prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "proxy_restarts_total",
		Help: "API proxies restarted on a new port after their listener failed."})
	m.Errors = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "errors_total",
		Help: "Failures by stage (setup, delete, deletion_watch, drift, pod_resources)."}, []string{"stage"})
	m.Setup = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "setup_duration_seconds",
		Help: "Time from POST /clusters to the first connected agent session.", Buckets: prometheus.ExponentialBuckets(0.1, 2, 12)})
	m.DriftRepairs = prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "node_status_repairs_total",
		Help: "Node statuses re-patched (or Nodes re-created) after drifting from the template."})
	m.Deleted = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "deleted_total",
		Help: "Virtual clusters removed, through the API or because Rancher deleted them."}, []string{"by"})
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
