package keycloaksim

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/waldur/site-agent/internal/sim/simfault"
	"github.com/waldur/site-agent/internal/sim/simhttp"
)

// Admin is the administrator that logs in with the password grant.
type Admin struct {
	Username string   // default "admin"
	Password string   // default "admin"
	Realm    string   // realm the admin user lives in; default "master"
	Roles    []string // realm-management roles; nil means {"manage-users"}
}

// Options configure a Server. The zero value is usable.
type Options struct {
	// Realm is the managed realm created at start; default "waldur". More can be added with
	// AddRealm.
	Realm string
	// Admin is the administrator; nil means admin/admin in master with manage-users.
	Admin *Admin
	// TokenTTL is the access token lifetime; default 60s (Keycloak's master realm default).
	// expires_in reports whole seconds.
	TokenTTL time.Duration
	// RefreshTTL is the refresh token lifetime; default 30m (SSO session idle).
	RefreshTTL time.Duration
	// PathPrefix is prepended to every route, e.g. "/auth" for the legacy WildFly layout.
	PathPrefix string
	// ChildrenSearchIgnored makes GET groups/{id}/children ignore search and exact, as
	// Keycloak 24.0.x did.
	ChildrenSearchIgnored bool
	// Version is the Keycloak version to behave like (default DefaultVersion), reported by
	// GET admin/serverinfo. Before 23 there is no GET groups/{id}/children and groups carry
	// their subtree; before 20 GET groups ignores exact (see features).
	Version string
	// LightweightTokens leaves the role claims out of access tokens, as Keycloak does for
	// clients with "always use lightweight access token" on.
	LightweightTokens bool
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logf, when set, receives one line per request.
	Logf func(format string, args ...any)
}

// Server is the simulator. It implements http.Handler and is safe for concurrent use.
type Server struct {
	opts  Options
	feat  features
	admin Admin
	key   []byte

	mu            sync.Mutex
	realms        map[string]*realm
	tokens        map[string]*tokenInfo
	grants        map[string]int
	calls         map[string]int
	ignoredQuery  []string
	ignoredFields []string
	unimplemented []string

	*simfault.Injector // SetFaults, FailNext, FaultLog
}

// New returns a ready simulator with the admin realm and the managed realm.
func New(opts Options) *Server {
	if opts.Realm == "" {
		opts.Realm = "waldur"
	}
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = 60 * time.Second
	}
	if opts.RefreshTTL <= 0 {
		opts.RefreshTTL = 30 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.PathPrefix = "/" + strings.Trim(opts.PathPrefix, "/")
	if opts.PathPrefix == "/" {
		opts.PathPrefix = ""
	}
	admin := Admin{Username: "admin", Password: "admin", Realm: "master", Roles: []string{RoleManageUsers}}
	if opts.Admin != nil {
		admin = *opts.Admin
		if admin.Realm == "" {
			admin.Realm = "master"
		}
		if admin.Roles == nil {
			admin.Roles = []string{RoleManageUsers}
		}
	}
	s := &Server{
		opts: opts, feat: featuresOf(opts.Version), admin: admin, key: randomBytes(32),
		realms: map[string]*realm{}, tokens: map[string]*tokenInfo{},
		grants: map[string]int{}, calls: map[string]int{},
		Injector: simfault.New(faultProfile),
	}
	s.realms[admin.Realm] = newRealm(admin.Realm)
	if _, ok := s.realms[opts.Realm]; !ok {
		s.realms[opts.Realm] = newRealm(opts.Realm)
	}
	s.realms[admin.Realm].addUser(newID(), admin.Username, opts.Now())
	return s
}

// Serve answers requests on l until l is closed.
func (s *Server) Serve(l net.Listener) error {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 90 * time.Second}
	err := srv.Serve(l)
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

func (s *Server) now() time.Time { return s.opts.Now() }

// ServeHTTP routes, counts, maybe injects a fault, authenticates and answers.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := simhttp.NewRecorder(w)
	s.serve(rec, r)
	if s.opts.Logf != nil {
		s.opts.Logf("keycloaksim: %s %s -> %d", r.Method, r.URL.RequestURI(), rec.Status())
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rt, status := s.match(r)
	switch status {
	case http.StatusNotFound:
		writeError(w, http.StatusNotFound, "HTTP 404 Not Found")
		return
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", strings.Join(rt.allowed(), ", "))
		writeError(w, http.StatusMethodNotAllowed, "HTTP 405 Method Not Allowed")
		return
	case http.StatusNotImplemented:
		s.record(&s.unimplemented, r.Method+" "+r.URL.Path)
		writeError(w, http.StatusNotImplemented, "keycloaksim does not model "+r.Method+" "+r.URL.Path)
		return
	}
	s.count(rt.name)
	kind, faulty := s.Pick(rt.name)
	if faulty && !kind.AppliesRequest() {
		simfault.Write(w, kind, answerFault)
		return
	}
	c := &call{s: s, r: r, rt: rt}
	var res result
	if rt.name == RouteToken {
		res = s.handleToken(c)
	} else {
		res = s.handleAdmin(c)
	}
	if faulty { // lose-response: the request was applied, the answer is lost
		simfault.Write(w, kind, answerFault)
		return
	}
	res.write(w)
}

// handleAdmin authenticates the bearer token, resolves the realm, checks the query and body
// and runs the route's handler under the state lock.
func (s *Server) handleAdmin(c *call) result {
	roles, ok := s.authenticate(c.r)
	if !ok {
		return errorResult(http.StatusUnauthorized, "HTTP 401 Unauthorized")
	}
	c.roles = roles
	if c.rt.name == RouteServerInfo {
		s.mu.Lock()
		defer s.mu.Unlock()
		return serverInfo(c)
	}
	s.mu.Lock()
	c.realm = s.realms[c.rt.realm]
	s.mu.Unlock()
	if c.realm == nil {
		return errorResult(http.StatusNotFound, "Realm not found.")
	}
	if res, bad := s.parseQuery(c); bad {
		return res
	}
	if res, bad := s.readBody(c); bad {
		return res
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return handlers[c.rt.name](c)
}

func (s *Server) count(route string) {
	s.mu.Lock()
	s.calls[route]++
	s.mu.Unlock()
}

func (s *Server) record(list *[]string, entry string) {
	s.mu.Lock()
	*list = append(*list, entry)
	s.mu.Unlock()
}
