package simfault

import (
	"math/rand"
	"strings"
	"sync"
)

// Config configures random fault injection. Faults are drawn in request order from a
// math/rand generator seeded with Seed, so a sequential client sees the same faults for the
// same seed and request sequence. Note that Go's http.Transport transparently retries an
// idempotent request (GET) whose reused keep-alive connection is reset, so a reset GET may not
// surface to such a client.
type Config struct {
	Rate  float64 // probability per request
	Seed  int64   // generator seed
	Kinds []Kind  // chosen uniformly; empty means the simulator's defaults (Profile.Kinds)
	// Operations are the operation names faults apply to, as the simulator names them
	// (waldursim: operationIds, keycloaksim: route names, ranchersim: "project.create", ...);
	// a name ending in "*" is a prefix ("k8s.*"). Empty means all but Profile.Spared.
	Operations []string
}

// Profile is what differs between simulators in choosing faults.
type Profile struct {
	// Kinds are drawn when Config.Kinds is empty; empty means the four status kinds.
	Kinds []Kind
	// Spared operations get no random faults unless Config.Operations names them (e.g. token
	// requests); FailNext still applies to them.
	Spared []string
}

// Injector decides which requests fail. It is safe for concurrent use; simulators embed it,
// which gives them SetFaults, FailNext and FaultLog, and call Pick for every request.
type Injector struct {
	profile Profile

	mu   sync.Mutex
	cfg  Config
	rng  *rand.Rand // nil until SetFaults: no random faults
	next map[string][]Kind
	log  []string
}

// New returns an Injector that injects nothing until SetFaults or FailNext.
func New(p Profile) *Injector {
	if len(p.Kinds) == 0 {
		p.Kinds = []Kind{Status500, Status502, Status503, Status429}
	}
	p.Kinds = append([]Kind(nil), p.Kinds...)
	p.Spared = append([]string(nil), p.Spared...)
	return &Injector{profile: p}
}

// SetFaults replaces the random fault configuration and reseeds its generator; the zero
// Config turns random faults off. Queued FailNext faults and the log are kept.
func (in *Injector) SetFaults(c Config) {
	c.Kinds = append([]Kind(nil), c.Kinds...)
	if len(c.Kinds) == 0 {
		c.Kinds = in.profile.Kinds
	}
	c.Operations = append([]string(nil), c.Operations...)
	in.mu.Lock()
	defer in.mu.Unlock()
	in.cfg = c
	in.rng = rand.New(rand.NewSource(c.Seed))
}

// FailNext makes the next n requests of operation op fail with kind, before random faults
// (which these requests do not consume).
func (in *Injector) FailNext(op string, n int, kind Kind) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.next == nil {
		in.next = map[string][]Kind{}
	}
	for range n {
		in.next[op] = append(in.next[op], kind)
	}
}

// FaultLog lists the faults injected so far as "operation:kind", in order.
func (in *Injector) FaultLog() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]string(nil), in.log...)
}

// Pick decides, in request order, whether the request of operation op fails and how, and logs
// the fault. The simulator calls it once per request, after routing and whatever checks the
// real service makes before it could fail.
func (in *Injector) Pick(op string) (Kind, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if queued := in.next[op]; len(queued) > 0 {
		in.next[op] = queued[1:]
		return in.record(op, queued[0]), true
	}
	if in.rng == nil || in.cfg.Rate <= 0 || !in.selected(op) {
		return 0, false
	}
	if in.rng.Float64() >= in.cfg.Rate {
		return 0, false
	}
	return in.record(op, in.cfg.Kinds[in.rng.Intn(len(in.cfg.Kinds))]), true
}

func (in *Injector) record(op string, k Kind) Kind {
	in.log = append(in.log, op+":"+k.String())
	return k
}

// selected reports whether random faults apply to op.
func (in *Injector) selected(op string) bool {
	if len(in.cfg.Operations) == 0 {
		return !matches(in.profile.Spared, op)
	}
	return matches(in.cfg.Operations, op)
}

// matches reports whether op is one of names, or starts with a name ending in "*".
func matches(names []string, op string) bool {
	for _, n := range names {
		if n == op {
			return true
		}
		if prefix, ok := strings.CutSuffix(n, "*"); ok && strings.HasPrefix(op, prefix) {
			return true
		}
	}
	return false
}
