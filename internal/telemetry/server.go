package telemetry

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
)

// Health answers the probes: Live is the liveness check, Ready the readiness check. Role, when
// set, is added to a healthy answer (e.g. "leader" or "standby, leader is pod-b").
type Health struct {
	Live  func() error
	Ready func() error
	Role  func() string
}

// Serve starts the listener of /metrics, /healthz, /readyz, /status and /status.json on addr
// and returns once it listens. It stops when ctx is cancelled.
func Serve(ctx context.Context, addr string, m *Metrics, h Health, st *Status, log *zap.Logger) (net.Addr, error) {
	m.registerRuntime()
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry}))
	mux.HandleFunc("/healthz", probe(h.Live, h.Role))
	mux.HandleFunc("/readyz", probe(h.Ready, h.Role))
	mux.Handle("GET /status", StatusHTML(st))
	mux.Handle("GET /status.json", StatusJSON(st))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", zap.Error(err))
		}
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return l.Addr(), nil
}

func probe(check func() error, role func() string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if check != nil {
			if err := check(); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(err.Error() + "\n"))
				return
			}
		}
		if role != nil {
			_, _ = w.Write([]byte("ok: " + role() + "\n"))
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	}
}
