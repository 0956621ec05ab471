package vclusters

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
)

// Handler is the HTTP API:
//
//	POST   /clusters         {"name": "..."} → 201 and the cluster; 400 bad body, 422 bad name, 409 taken
//	GET    /clusters         → {"clusters": [...], "summary": {"connected": n, ...}}
//	GET    /clusters/{name}  → the cluster, or 404
//	DELETE /clusters/{name}  → 200 {"name","status":"deleted"}, 404, 409 while deleting, 502 if cleanup failed
//	POST   /clusters/{name}/scale {"nodes": N, "pods": M} → 200 and the cluster; 400, 404, 409, 422
//	POST   /clusters/{name}/chaos {"notready": K}         → 200 and the cluster; 400, 404, 409, 422
//	GET    /healthz, /metrics, and /debug/pprof/ when enabled.
//
// Every request passes guard first (Host, api_token, JSON bodies).
func (m *Manager) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /clusters", m.handleCreate)
	mux.HandleFunc("GET /clusters", m.handleList)
	mux.HandleFunc("GET /clusters/{name}", m.handleGet)
	mux.HandleFunc("DELETE /clusters/{name}", m.handleDelete)
	mux.HandleFunc("POST /clusters/{name}/scale", m.handleScale)
	mux.HandleFunc("POST /clusters/{name}/chaos", m.handleChaos)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.met.Registry, promhttp.HandlerOpts{}))
	if m.cfg.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return m.guard(mux)
}

type apiError struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (m *Manager) handleCreate(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name string `json:"name"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{Error: "body must be a JSON object {\"name\": \"...\"}: " + err.Error()})
		return
	}
	if dec.More() {
		writeJSON(w, http.StatusBadRequest, apiError{Error: "body must hold one JSON object"})
		return
	}
	v, err := m.Create(strings.TrimSpace(in.Name))
	switch {
	case errors.Is(err, ErrInvalidName):
		writeJSON(w, http.StatusUnprocessableEntity, apiError{Error: err.Error(), Field: "name"})
	case errors.Is(err, ErrDuplicate):
		writeJSON(w, http.StatusConflict, apiError{Error: "virtual cluster " + in.Name + " exists", Field: "name"})
	case errors.Is(err, ErrNotRunning):
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, apiError{Error: err.Error()})
	case err != nil:
		m.log.Error("virtual cluster not created", zap.String("cluster", in.Name), zap.Error(err))
		writeJSON(w, http.StatusInternalServerError, apiError{Error: err.Error()})
	default:
		w.Header().Set("Location", "/clusters/"+v.Name)
		writeJSON(w, http.StatusCreated, v)
	}
}

func (m *Manager) handleList(w http.ResponseWriter, _ *http.Request) {
	list := m.List()
	summary := map[Status]int{}
	for _, v := range list {
		summary[v.Status]++
	}
	writeJSON(w, http.StatusOK, map[string]any{"clusters": list, "summary": summary})
}

func (m *Manager) handleGet(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	v, ok := m.Get(name)
	if !ok {
		writeJSON(w, http.StatusNotFound, apiError{Error: "no virtual cluster named " + name})
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (m *Manager) handleDelete(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	// A client that gives up does not leave the deletion half done.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), m.cfg.Sync.RancherRemovalWait+m.cfg.Sync.PodDeletionWait+time.Minute)
	defer cancel()
	err := m.Delete(ctx, name, false)
	switch {
	case errors.Is(err, ErrNotFound):
		writeJSON(w, http.StatusNotFound, apiError{Error: "no virtual cluster named " + name})
	case errors.Is(err, ErrBusy):
		writeJSON(w, http.StatusConflict, apiError{Error: "virtual cluster " + name + " is being deleted"})
	case err != nil:
		writeJSON(w, http.StatusBadGateway, apiError{Error: "deleting " + name + " failed (retry DELETE): " + err.Error()})
	default:
		writeJSON(w, http.StatusOK, map[string]string{"name": name, "status": "deleted"})
	}
}

// decodeBody reads one JSON object with only known fields into v; false after answering 400.
func decodeBody(w http.ResponseWriter, r *http.Request, v any, shape string) bool {
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil || dec.More() {
		msg := "body must be one JSON object " + shape
		if err != nil {
			msg += ": " + err.Error()
		}
		writeJSON(w, http.StatusBadRequest, apiError{Error: msg})
		return false
	}
	return true
}

func (m *Manager) handleScale(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Nodes *int `json:"nodes"`
		Pods  *int `json:"pods"`
	}
	if !decodeBody(w, r, &in, `{"nodes": N, "pods": M}`) {
		return
	}
	if in.Nodes == nil && in.Pods == nil {
		writeJSON(w, http.StatusBadRequest, apiError{Error: `body must set "nodes", "pods" or both`})
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), m.cfg.Sync.PodDeletionWait+2*time.Minute)
	defer cancel()
	v, err := m.Scale(ctx, r.PathValue("name"), in.Nodes, in.Pods)
	m.answerChange(w, r.PathValue("name"), v, err)
}

func (m *Manager) handleChaos(w http.ResponseWriter, r *http.Request) {
	var in struct {
		NotReady *int `json:"notready"`
	}
	if !decodeBody(w, r, &in, `{"notready": K}`) {
		return
	}
	if in.NotReady == nil {
		writeJSON(w, http.StatusBadRequest, apiError{Error: `body must set "notready"`})
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), time.Minute)
	defer cancel()
	v, err := m.Chaos(ctx, r.PathValue("name"), *in.NotReady)
	m.answerChange(w, r.PathValue("name"), v, err)
}

// answerChange answers a scale or chaos request.
func (m *Manager) answerChange(w http.ResponseWriter, name string, v View, err error) {
	switch {
	case errors.Is(err, ErrNotFound):
		writeJSON(w, http.StatusNotFound, apiError{Error: "no virtual cluster named " + name})
	case errors.Is(err, ErrBusy):
		writeJSON(w, http.StatusConflict, apiError{Error: "virtual cluster " + name + " is being deleted"})
	case errors.Is(err, ErrInvalidSize), errors.Is(err, ErrNoKubelet):
		writeJSON(w, http.StatusUnprocessableEntity, apiError{Error: err.Error()})
	case err != nil:
		m.log.Warn("virtual cluster change not applied", zap.String("cluster", name), zap.Error(err))
		writeJSON(w, http.StatusBadGateway, apiError{Error: "applying the change to " + name + " failed (retry): " + err.Error()})
	default:
		writeJSON(w, http.StatusOK, v)
	}
}
