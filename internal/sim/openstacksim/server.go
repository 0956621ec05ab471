package openstacksim

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/waldur/site-agent/internal/sim/simfault"
)

// Options configure a simulator.
type Options struct {
	// Admin credentials (default admin / secret-admin-password, project admin, domain Default).
	AdminUser, AdminPassword, AdminProject string
	Region                                 string        // default RegionOne
	TokenTTL                               time.Duration // default 1h
	// Users are created in the Default domain (team members for membership tests).
	Users []string
	// ExtraDomains are created next to Default (name → id is lower-case name).
	ExtraDomains []string
	// ExternalNetwork is the name of the router:external network (default public).
	ExternalNetwork string
	// Flavors replace the default flavors (m1.tiny … m1.xlarge, see DefaultFlavors).
	Flavors []Flavor
	// BuildDelay is how long a booted server stays in BUILD before it is ACTIVE (0: ACTIVE at
	// the first read after the create).
	BuildDelay time.Duration
	// DeleteDelay is how long a deleted server stays listed with task state "deleting" (and
	// its pre-made ports bound) before Nova's compute host has removed it, as on a real cloud
	// (0: gone at once, unless SetAsyncDeletes).
	DeleteDelay time.Duration
	// Without lists catalog service types left out of tokens, e.g. "image" or "load-balancer"
	// (a cloud without Glance or Octavia).
	Without []string
}

// Server is the simulator; safe for concurrent use.
type Server struct {
	opts   Options
	routes []route

	mu    sync.Mutex
	st    *state
	calls map[string]int
	down  map[string]bool // service → refuses connections
	// asyncDeletes: deletions leave objects in their deleting state (SetAsyncDeletes).
	asyncDeletes bool
	errorNames   map[string]bool // servers booted with these names go to ERROR (FailServers)

	*simfault.Injector // SetFaults, FailNext, FaultLog
}

// New returns a seeded simulator.
func New(o Options) *Server {
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&o.AdminUser, "admin")
	def(&o.AdminPassword, "secret-admin-password")
	def(&o.AdminProject, "admin")
	def(&o.Region, "RegionOne")
	def(&o.ExternalNetwork, "public")
	if o.TokenTTL == 0 {
		o.TokenTTL = time.Hour
	}
	s := &Server{opts: o, st: newState(), calls: map[string]int{}, down: map[string]bool{}, errorNames: map[string]bool{},
		Injector: simfault.New(faultProfile)}
	s.seed()
	s.routes = s.table()
	return s
}

// AuthURL is the Keystone URL for a simulator served at base (e.g. an httptest URL).
func AuthURL(base string) string { return strings.TrimRight(base, "/") + "/identity/v3" }

// Options returns the effective options (with defaults).
func (s *Server) Options() Options { return s.opts }

// route is one operation: method + path pattern ({} matches one segment).
type route struct {
	service string
	method  string
	pattern []string
	op      string   // e.g. "neutron POST /v2.0/routers"
	query   []string // allowed query parameters
	public  bool     // no token needed
	handle  func(c *call)
}

// call is one request being served.
type call struct {
	s      *Server
	w      http.ResponseWriter
	r      *http.Request
	route  *route
	params []string // values of {} segments
	tok    *token
	body   []byte
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt, params, status := s.match(r)
	if rt == nil {
		writeError(w, "", status, fmt.Sprintf("The resource could not be found: %s %s", r.Method, r.URL.Path))
		return
	}
	s.mu.Lock()
	s.calls[rt.op]++
	down := s.down[rt.service]
	s.mu.Unlock()
	if down {
		simfault.ResetConnection(w)
		return
	}
	c := &call{s: s, w: w, r: r, route: rt, params: params}
	if !c.readBody() || !c.checkQuery() || !c.authenticate() {
		return
	}
	if kind, ok := s.Pick(rt.op); ok {
		s.inject(c, kind)
		return
	}
	s.serve(c)
}

// serve runs the handler under the state lock, after time-driven state changes.
func (s *Server) serve(c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.settle(time.Now())
	c.route.handle(c)
}

func (s *Server) match(r *http.Request) (*route, []string, int) {
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	status := http.StatusNotFound
	for i := range s.routes {
		rt := &s.routes[i]
		params, ok := matchPath(rt.pattern, segs)
		if !ok {
			continue
		}
		if rt.method != r.Method {
			status = http.StatusMethodNotAllowed
			continue
		}
		return rt, params, 0
	}
	return nil, nil, status
}

func matchPath(pattern, segs []string) ([]string, bool) {
	if len(pattern) != len(segs) {
		return nil, false
	}
	var params []string
	for i, p := range pattern {
		switch {
		case p == "{}":
			if segs[i] == "" {
				return nil, false
			}
			params = append(params, segs[i])
		case p != segs[i]:
			return nil, false
		}
	}
	return params, true
}

func (c *call) checkQuery() bool {
	allowed := map[string]bool{}
	for _, q := range c.route.query {
		allowed[q] = true
	}
	for k := range c.r.URL.Query() {
		if !allowed[k] {
			c.fail(http.StatusBadRequest, fmt.Sprintf("unsupported query parameter %q", k))
			return false
		}
	}
	return true
}

func (c *call) authenticate() bool {
	if c.route.public {
		return true
	}
	c.s.mu.Lock()
	tok := c.s.st.tokens[c.r.Header.Get("X-Auth-Token")]
	now := time.Now()
	c.s.mu.Unlock()
	if tok == nil || now.After(tok.expires) {
		writeError(c.w, "keystone", http.StatusUnauthorized, "The request you have made requires authentication.")
		return false
	}
	if !tok.admin {
		c.fail(http.StatusForbidden, "Policy doesn't allow this operation to be performed.")
		return false
	}
	c.tok = tok
	return true
}

func (c *call) param(i int) string { return c.params[i] }

func (c *call) query(key string) string { return c.r.URL.Query().Get(key) }

// fail writes an error in the style of the route's service.
func (c *call) fail(status int, msg string) { writeError(c.w, c.route.service, status, msg) }

// Calls returns the number of requests per operation ("neutron POST /v2.0/routers").
func (s *Server) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.calls))
	for k, v := range s.calls {
		out[k] = v
	}
	return out
}

// TotalCalls is the number of requests served since the last ResetCalls.
func (s *Server) TotalCalls() int {
	n := 0
	for _, v := range s.Calls() {
		n += v
	}
	return n
}

// ResetCalls zeroes the call counters.
func (s *Server) ResetCalls() {
	s.mu.Lock()
	s.calls = map[string]int{}
	s.mu.Unlock()
}

// Operations lists every operation name the simulator serves, sorted.
func (s *Server) Operations() []string {
	var out []string
	for _, rt := range s.routes {
		out = append(out, rt.op)
	}
	sort.Strings(out)
	return out
}

// SetDown makes one service ("keystone", "nova", "cinder", "neutron", "glance", "octavia") reset every connection
// (a crashed or restarting API) until called again with false.
func (s *Server) SetDown(service string, down bool) {
	s.mu.Lock()
	s.down[service] = down
	s.mu.Unlock()
}

// ExpireTokens invalidates every issued token (clients must re-authenticate).
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	s.st.tokens = map[string]*token{}
	s.mu.Unlock()
}

func newID(dashes bool) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	if !dashes {
		return h
	}
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
