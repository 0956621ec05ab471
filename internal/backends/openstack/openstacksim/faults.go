package openstacksim

import (
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
)

// FaultKind is one kind of injected failure.
type FaultKind int

// Fault kinds. Status faults and FaultReset never apply the request; FaultLoseResponse
// applies it and then resets the connection, so the client never learns the outcome.
const (
	Fault500 FaultKind = iota + 1
	Fault502
	Fault503
	Fault429
	FaultReset
	FaultLoseResponse
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

// Faults configures random fault injection.
type Faults struct {
	Rate       float64     // probability per request
	Seed       int64       // same seed + same request order = same faults
	Kinds      []FaultKind // chosen uniformly; empty = the four status faults
	Operations []string    // operations faults apply to; empty = all but token requests
}

type faultState struct {
	cfg  Faults
	rng  *rand.Rand
	ops  map[string]bool
	next map[string][]FaultKind
	log  []string
}

// SetFaults replaces the random fault configuration.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(f.Kinds) == 0 {
		f.Kinds = []FaultKind{Fault500, Fault502, Fault503, Fault429}
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

// FailNext makes the next n requests of an operation fail with kind (before random faults).
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

// FaultLog lists injected faults as "operation:kind", in order.
func (s *Server) FaultLog() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.faults.log...)
}

func (s *Server) pickFault(op string) (FaultKind, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := &s.faults
	var kind FaultKind
	if q := f.next[op]; len(q) > 0 {
		kind, f.next[op] = q[0], q[1:]
	} else if f.cfg.Rate > 0 && f.rng != nil {
		eligible := f.ops[op] || (f.ops == nil && op != opToken)
		if !eligible || f.rng.Float64() >= f.cfg.Rate {
			return 0, false
		}
		kind = f.cfg.Kinds[f.rng.Intn(len(f.cfg.Kinds))]
	} else {
		return 0, false
	}
	f.log = append(f.log, fmt.Sprintf("%s:%s", op, kind))
	return kind, true
}

func (s *Server) inject(c *call, kind FaultKind) {
	switch kind {
	case FaultReset:
		resetConn(c.w)
	case FaultLoseResponse:
		rec := httptest.NewRecorder()
		real := c.w
		c.w = rec
		s.serve(c)
		resetConn(real)
	case Fault429:
		c.w.Header().Set("Retry-After", "0")
		c.fail(http.StatusTooManyRequests, "Too Many Requests")
	default:
		code := map[FaultKind]int{Fault500: 500, Fault502: 502, Fault503: 503}[kind]
		c.fail(code, fmt.Sprintf("injected %d", code))
	}
}
