package agent

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/telemetry"
	"github.com/waldur/site-agent/internal/waldurclient"
)

// observeBackend counts every operation of the offering's backend name: its result and
// latency, a transient failure (after the backend's own retries) as an upstream error, and its
// outcome on the status page.
func (a *Agent) observeBackend(off config.Offering, name string) backends.Observer {
	id := telemetry.OfferingLabel(off.UUID)
	return func(op string, took time.Duration, err error) {
		result := "ok"
		switch {
		case err == nil:
		case failure.IsTransient(err):
			result = "transient"
		case errors.Is(err, failure.ErrNotFound):
			result = "not_found"
		default:
			result = "error"
		}
		a.metrics.BackendOps.WithLabelValues(name, op, result).Inc()
		a.metrics.BackendLatency.WithLabelValues(name, op).Observe(took.Seconds())
		transient := result == "transient"
		if transient {
			a.metrics.UpstreamErrors.WithLabelValues(id, name).Inc()
		}
		detail := ""
		if transient {
			detail = op + ": " + err.Error()
		}
		a.status.Upstream(off.UUID, name, transient, detail)
	}
}

// observeWaldur counts every Waldur request of the offering: by endpoint and status, its
// latency, a request that failed after its retries (no answer, 429, 5xx) as an upstream error,
// and its outcome on the status page.
func (a *Agent) observeWaldur(off config.Offering) func(waldurclient.RequestInfo) {
	id := telemetry.OfferingLabel(off.UUID)
	return func(ri waldurclient.RequestInfo) {
		a.metrics.WaldurRequests.WithLabelValues(id, ri.Method, ri.Endpoint, strconv.Itoa(ri.Status)).Inc()
		a.metrics.WaldurLatency.WithLabelValues(ri.Method, ri.Endpoint).Observe(ri.Duration.Seconds())
		failed := ri.Status == 0 || ri.Status == http.StatusTooManyRequests || ri.Status >= 500
		detail := ""
		if failed {
			a.metrics.UpstreamErrors.WithLabelValues(id, "waldur").Inc()
			answer := "no answer"
			if ri.Status != 0 {
				answer = fmt.Sprintf("HTTP %d %s", ri.Status, http.StatusText(ri.Status))
			}
			detail = fmt.Sprintf("%s %s: %s after %s", ri.Method, ri.Endpoint, answer, ri.Duration.Round(time.Millisecond))
		}
		a.status.Upstream(off.UUID, "waldur", failed, detail)
	}
}
