package waldursim

import (
	"math/rand"
	"net"
	"net/http"
)

// FaultKind is one kind of injected failure.
type FaultKind int

// Fault kinds. Status faults and FaultReset never apply the request; FaultLoseResponse applies
// it and then drops the connection, so the client never learns the outcome.
const (
	FaultStatus500    FaultKind = iota + 1 // Django "Server Error (500)" HTML page
	FaultStatus502                         // reverse proxy "502 Bad Gateway"
	FaultStatus503                         // reverse proxy "503 Service Unavailable"
	FaultStatus429                         // DRF throttling, with Retry-After: 0
	FaultReset                             // connection reset before any response
	FaultLoseResponse                      // request applied, then connection reset
)

func (k FaultKind) String() string {
	switch k {
	case FaultStatus500:
		return "status-500"
	case FaultStatus502:
		return "status-502"
	case FaultStatus503:
		return "status-503"
	case FaultStatus429:
		return "status-429"
	case FaultReset:
		return "reset"
	case FaultLoseResponse:
		return "lose-response"
	}
	return "unknown"
}

func (k FaultKind) appliesRequest() bool { return k == FaultLoseResponse }

// Faults configures random fault injection. Faults are drawn after routing, authentication and
// validation, in request order, so a sequential client sees the same sequence for the same
// seed. Note that Go's http.Transport transparently retries an idempotent request (GET) whose
// reused keep-alive connection is reset, so a reset GET may not surface to such a client.
type Faults struct {
	Rate       float64     // probability per request, drawn from a math/rand seeded with Seed
	Seed       int64       // same seed + same request sequence = same faults
	Kinds      []FaultKind // chosen uniformly; empty means the four status faults
	Operations []string    // operationIds faults apply to; empty means all
}

type faultState struct {
	cfg  Faults
	rng  *rand.Rand
	ops  map[string]bool
	next map[string][]FaultKind
	log  []string
}

// SetFaults replaces the random fault configuration and reseeds its generator.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f.Kinds = append([]FaultKind(nil), f.Kinds...)
	if len(f.Kinds) == 0 {
		f.Kinds = []FaultKind{FaultStatus500, FaultStatus502, FaultStatus503, FaultStatus429}
	}
	s.faults.cfg = f
	s.faults.rng = rand.New(rand.NewSource(f.Seed))
	s.faults.ops = nil
	if len(f.Operations) > 0 {
		s.faults.ops = map[string]bool{}
		for _, op := range f.Operations {
			s.faults.ops[op] = true
		}
	}
}

// FailNext makes the next n requests of operationID fail with kind, before random faults.
func (s *Server) FailNext(operationID string, n int, kind FaultKind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.faults.next == nil {
		s.faults.next = map[string][]FaultKind{}
	}
	for range n {
		s.faults.next[operationID] = append(s.faults.next[operationID], kind)
	}
}

// FaultLog lists the faults injected so far as "operationId:kind", in order.
func (s *Server) FaultLog() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.faults.log...)
}

// pickFault decides, in request order, whether this request fails and how.
func (s *Server) pickFault(opID string) (FaultKind, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := &s.faults
	if queued := f.next[opID]; len(queued) > 0 {
		f.next[opID] = queued[1:]
		f.log = append(f.log, opID+":"+queued[0].String())
		return queued[0], true
	}
	if f.rng == nil || f.cfg.Rate <= 0 || (f.ops != nil && !f.ops[opID]) {
		return 0, false
	}
	if f.rng.Float64() >= f.cfg.Rate {
		return 0, false
	}
	kind := f.cfg.Kinds[f.rng.Intn(len(f.cfg.Kinds))]
	f.log = append(f.log, opID+":"+kind.String())
	return kind, true
}

// injectFault answers with the fault instead of the real response.
func (s *Server) injectFault(w http.ResponseWriter, kind FaultKind) {
	switch kind {
	case FaultStatus500:
		writeHTML(w, http.StatusInternalServerError, "<h1>Server Error (500)</h1>")
	case FaultStatus502:
		writeHTML(w, http.StatusBadGateway, "<html><body><h1>502 Bad Gateway</h1></body></html>")
	case FaultStatus503:
		writeHTML(w, http.StatusServiceUnavailable, "<html><body><h1>503 Service Unavailable</h1></body></html>")
	case FaultStatus429:
		w.Header().Set("Retry-After", "0")
		writeJSON(w, http.StatusTooManyRequests, detail("Request was throttled. Expected available in 0 seconds."))
	default:
		resetConnection(w)
	}
}

// resetConnection drops the client connection without a response (RST where possible).
func resetConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // the server closes the connection without answering
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
