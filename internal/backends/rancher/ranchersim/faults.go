package ranchersim

import (
	"math/rand"
	"net"
	"net/http"
	"strings"
)

// FaultKind is one kind of injected failure.
type FaultKind int

// Fault kinds. Status faults and FaultReset never apply the request; FaultLoseResponse applies
// it and then drops the connection, so the client never learns the outcome.
const (
	Fault500          FaultKind = iota + 1 // norman ServerError document
	Fault502                               // load balancer "502 Bad Gateway" page
	Fault503                               // load balancer "503 Service Unavailable" page
	Fault429                               // rate limiter, Retry-After: 0
	FaultReset                             // connection reset before any response
	FaultLoseResponse                      // request applied, then connection reset
)

func (k FaultKind) String() string {
	switch k {
	case Fault500:
		return "500"
	case Fault502:
		return "502"
	case Fault503:
		return "503"
	case Fault429:
		return "429"
	case FaultReset:
		return "reset"
	case FaultLoseResponse:
		return "lose-response"
	}
	return "unknown"
}

func (k FaultKind) appliesRequest() bool { return k == FaultLoseResponse }

// Faults configures random fault injection, drawn in request order after authentication and
// routing from a generator seeded with Seed: the same seed and request sequence give the same
// faults.
type Faults struct {
	Rate  float64     // probability per request
	Seed  int64       // generator seed
	Kinds []FaultKind // chosen uniformly; empty means 500, 502, 503, 429 and reset
	// Ops are operation names (e.g. "project.create") or prefixes ending in "*" (e.g. "k8s.*")
	// faults apply to; empty means all.
	Ops []string
}

type faultState struct {
	cfg  Faults
	rng  *rand.Rand
	next map[string][]FaultKind
	log  []string
}

// SetFaults replaces the random fault configuration and reseeds its generator.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f.Kinds = append([]FaultKind(nil), f.Kinds...)
	if len(f.Kinds) == 0 {
		f.Kinds = []FaultKind{Fault500, Fault502, Fault503, Fault429, FaultReset}
	}
	s.faults.cfg = f
	s.faults.rng = rand.New(rand.NewSource(f.Seed))
}

// FailNext makes the next n requests of operation op fail with kind, before random faults.
func (s *Server) FailNext(op string, n int, kind FaultKind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.faults.next == nil {
		s.faults.next = map[string][]FaultKind{}
	}
	for range n {
		s.faults.next[op] = append(s.faults.next[op], kind)
	}
}

// FaultLog lists the faults injected so far as "op:kind", in order.
func (s *Server) FaultLog() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.faults.log...)
}

func (s *Server) pickFault(op string) (FaultKind, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := &s.faults
	if queued := f.next[op]; len(queued) > 0 {
		f.next[op] = queued[1:]
		f.log = append(f.log, op+":"+queued[0].String())
		return queued[0], true
	}
	if f.rng == nil || f.cfg.Rate <= 0 || !opSelected(f.cfg.Ops, op) {
		return 0, false
	}
	if f.rng.Float64() >= f.cfg.Rate {
		return 0, false
	}
	kind := f.cfg.Kinds[f.rng.Intn(len(f.cfg.Kinds))]
	f.log = append(f.log, op+":"+kind.String())
	return kind, true
}

func opSelected(ops []string, op string) bool {
	if len(ops) == 0 {
		return true
	}
	for _, o := range ops {
		if o == op || (strings.HasSuffix(o, "*") && strings.HasPrefix(op, strings.TrimSuffix(o, "*"))) {
			return true
		}
	}
	return false
}

func injectFault(w http.ResponseWriter, kind FaultKind) {
	switch kind {
	case Fault500:
		writeError(w, http.StatusInternalServerError, "ServerError", "Internal error occurred")
	case Fault502:
		writeHTML(w, http.StatusBadGateway, "<html><body><h1>502 Bad Gateway</h1></body></html>")
	case Fault503:
		writeHTML(w, http.StatusServiceUnavailable, "<html><body><h1>503 Service Unavailable</h1></body></html>")
	case Fault429:
		w.Header().Set("Retry-After", "0")
		writeHTML(w, http.StatusTooManyRequests, "<html><body><h1>429 Too Many Requests</h1></body></html>")
	default:
		resetConnection(w)
	}
}

// resetConnection drops the client connection without a response (RST where possible).
func resetConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

func writeHTML(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}
