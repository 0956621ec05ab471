package waldursim

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/waldur/site-agent/internal/sim/simfault"
	"github.com/waldur/site-agent/internal/sim/simhttp"
)

// Options configure a Server. The zero value is usable.
type Options struct {
	// Token is the static DRF token accepted as "Authorization: Token <t>"; default "test-token".
	Token string
	// BearerTokens are OIDC access tokens accepted as "Authorization: Bearer <t>".
	BearerTokens []string
	// Staff makes users/me report is_staff and allows backfilling past billing periods.
	Staff bool
	// ValidateResponses checks every response against the contract; default true.
	ValidateResponses *bool
	// Latency is added to every request.
	Latency time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logf, when set, receives one line per request.
	Logf func(format string, args ...any)
	// Broker, when set, receives the queues create_queue declares and the events published
	// when orders, roles, resources, accounts and offering users change (events.go).
	Broker EventBroker
	// Version is the Waldur release /api/version/ reports; default ContractVersion. The
	// addendum's operations (addendum.go) are served only from their first release on: an
	// older version answers them 404, as that Waldur would.
	Version string
}

// Server is the simulator. It implements http.Handler and is safe for concurrent use.
type Server struct {
	opts     Options
	validate bool
	c        *contract

	mu         sync.Mutex
	st         *state
	calls      map[string]int
	total      int
	violations []string
	published  []PublishedEvent
	// brokerPassword overrides the token as the broker users' password (SetBrokerPassword).
	brokerPassword string

	*simfault.Injector // SetFaults, FailNext, FaultLog
}

// New returns a ready simulator. It panics if the embedded contract cannot be loaded, which is
// a build defect, not a runtime condition.
func New(opts Options) *Server {
	c, err := loadContract()
	if err != nil {
		panic("waldursim: " + err.Error())
	}
	if opts.Token == "" {
		opts.Token = "test-token"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Version == "" {
		opts.Version = ContractVersion
	}
	s := &Server{opts: opts, validate: true, c: c, st: newState(), calls: map[string]int{},
		Injector: simfault.New(faultProfile)}
	if opts.ValidateResponses != nil {
		s.validate = *opts.ValidateResponses
	}
	s.st.me = currentUser{User: User{
		UUID: s.st.newUUID(), Username: "site-agent", FullName: "Site Agent", Email: "site-agent@example.com",
	}}
	return s
}

// Bool returns a pointer to b, for Options.ValidateResponses.
func Bool(b bool) *bool { return &b }

// Serve answers requests on l until l is closed, with sane timeouts.
func (s *Server) Serve(l net.Listener) error {
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       90 * time.Second,
	}
	err := srv.Serve(l)
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

func (s *Server) now() time.Time { return s.opts.Now().UTC() }

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// ServeHTTP routes, authenticates, validates, maybe injects a fault, applies and answers.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opts.Latency > 0 {
		if !sleepCtx(r.Context(), s.opts.Latency) {
			return
		}
	}
	rec := simhttp.NewRecorder(w)
	s.serve(rec, r)
	s.logf("waldursim: %s %s -> %d", r.Method, r.URL.RequestURI(), rec.Status())
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	op, params, err := s.c.findRoute(r)
	if err == nil && op.Since != "" && !versionAtLeast(s.opts.Version, op.Since) {
		err = errPathNotFound // this Waldur release does not have the operation yet
	}
	switch {
	case errors.Is(err, errPathNotFound):
		s.violation(r.Method, r.URL.Path, "unknown path")
		writeJSON(w, http.StatusNotFound, detail("Not found."))
		return
	case errors.Is(err, errMethodNotAllowed):
		s.violation(r.Method, r.URL.Path, "method not allowed for this path")
		writeJSON(w, http.StatusMethodNotAllowed, detail(`Method "`+r.Method+`" not allowed.`))
		return
	}
	s.count(op.ID)
	if !s.authorized(r.Header.Get("Authorization")) {
		w.Header().Set("WWW-Authenticate", `Token realm="api"`)
		writeJSON(w, http.StatusUnauthorized, detail("Invalid token."))
		return
	}
	c, bad := s.checkRequest(r, op, params)
	if bad != nil {
		s.violation(r.Method, r.URL.Path, bad.reason)
		writeJSON(w, bad.status, bad.body)
		return
	}
	kind, faulty := s.Pick(op.ID)
	if faulty && !kind.AppliesRequest() {
		simfault.Write(w, kind, answerFault)
		return
	}
	res := s.dispatch(op, c)
	s.flushEvents()
	if faulty { // lose-response: the request was applied, the answer is lost
		simfault.Write(w, kind, answerFault)
		return
	}
	s.respond(w, r, op, c, res)
}

// authorized accepts "Token <static>" and "Bearer <configured access token>".
func (s *Server) authorized(h string) bool {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || token == "" {
		return false
	}
	switch scheme {
	case "Token":
		return token == s.opts.Token
	case "Bearer":
		for _, t := range s.opts.BearerTokens {
			if token == t {
				return true
			}
		}
	}
	return false
}

func (s *Server) count(opID string) {
	s.mu.Lock()
	s.calls[opID]++
	s.total++
	s.mu.Unlock()
}

func (s *Server) violation(method, path, reason string) {
	s.mu.Lock()
	s.violations = append(s.violations, method+" "+path+": "+reason)
	s.mu.Unlock()
}

// dispatch runs the operation's handler under the state lock.
func (s *Server) dispatch(op *opInfo, c *call) result {
	h, ok := endpoints[op.ID]
	if !ok {
		return errorResult(http.StatusNotImplemented, detail("simulator has no handler for "+op.ID))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c.now = s.now()
	res := h.fn(s, c)
	res.materialize(op, c.query)
	return res
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
