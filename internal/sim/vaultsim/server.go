package vaultsim

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/waldur/site-agent/internal/sim/simfault"
)

// Faults configures random fault injection (simfault.Config).
type Faults = simfault.Config

// Server is the simulator; it is an http.Handler. The embedded Injector injects faults by
// operation name (see opName): "login", "policy.write", "approle.role.write",
// "approle.role-id", "approle.secret-id", "kv.read", "kv.write", "kv.delete", "sys.mounts", …
type Server struct {
	*simfault.Injector
	mu       sync.Mutex
	now      func() time.Time
	root     string
	policies map[string]map[string][]string // name → path → capabilities
	roles    map[string]*role               // "<mount>/<name>"
	secrets  map[string]*secretID           // secret id → its grant
	tokens   map[string]*token
	kv       map[string]map[string]any // "<mount>/<path>" → data (latest version)
	versions map[string]int
	kvMounts map[string]bool
	auth     map[string]bool // AppRole mounts
	calls    map[string]int  // "METHOD path" → count
}

type token struct {
	policies []string
	uses     int // left; 0 = unlimited
	expires  time.Time
	root     bool
}

type role struct {
	policies                    []string
	roleID                      string
	secretTTL, tokenTTL, maxTTL time.Duration
	secretUses, tokenUses       int
}

type secretID struct {
	role    string // "<mount>/<name>"
	uses    int    // left; 0 = unlimited
	expires time.Time
}

// New returns a simulator with one KV v2 mount "secret", one AppRole mount "approle" and the
// given root token. now may be nil (time.Now).
func New(rootToken string, now func() time.Time) *Server {
	if now == nil {
		now = time.Now
	}
	return &Server{Injector: simfault.New(simfault.Profile{}), now: now, root: rootToken, policies: map[string]map[string][]string{}, roles: map[string]*role{},
		secrets: map[string]*secretID{}, tokens: map[string]*token{rootToken: {root: true}},
		kv: map[string]map[string]any{}, versions: map[string]int{}, kvMounts: map[string]bool{"secret": true},
		auth: map[string]bool{"approle": true}, calls: map[string]int{}}
}

// Calls returns how often "METHOD /v1/path" was requested.
func (s *Server) Calls(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[key]
}

// TotalCalls is the number of requests served.
func (s *Server) TotalCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		n += c
	}
	return n
}

// call is one request being served.
type call struct {
	s    *Server
	w    http.ResponseWriter
	r    *http.Request
	path string // without /v1/
	tok  *token
	body map[string]any
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[r.Method+" "+r.URL.Path]++
	c := &call{s: s, w: w, r: r, path: strings.TrimPrefix(r.URL.Path, "/v1/")}
	if !strings.HasPrefix(r.URL.Path, "/v1/") {
		c.fail(http.StatusNotFound, "unsupported path")
		return
	}
	if r.Method == http.MethodPost || r.Method == http.MethodPut {
		if err := json.NewDecoder(r.Body).Decode(&c.body); err != nil && !errors.Is(err, io.EOF) {
			c.fail(http.StatusBadRequest, "failed to parse JSON input: "+err.Error())
			return
		}
	}
	if kind, hit := s.Pick(opName(r.Method, c.path)); hit {
		if kind.AppliesRequest() {
			c.w = discardWriter{header: http.Header{}}
			c.dispatch()
		}
		simfault.Write(w, kind, answerFault)
		return
	}
	c.dispatch()
}

func (c *call) dispatch() {
	if login, ok := strings.CutSuffix(c.path, "/login"); ok && strings.HasPrefix(login, "auth/") {
		c.login(strings.TrimPrefix(login, "auth/"))
		return
	}
	if !c.authenticate() {
		return
	}
	c.route()
}

// opName names a request for fault injection.
func opName(method, path string) string {
	verb := map[string]string{http.MethodGet: "read", http.MethodPost: "write", http.MethodPut: "write", http.MethodDelete: "delete"}[method]
	parts := strings.Split(path, "/")
	switch {
	case strings.HasSuffix(path, "/login"):
		return "login"
	case strings.HasPrefix(path, "sys/policies/acl/"), strings.HasPrefix(path, "sys/policy/"):
		return "policy." + verb
	case strings.HasPrefix(path, "sys/internal/ui/mounts/"):
		return "sys.mounts"
	case path == "sys/auth":
		return "sys.auth"
	case path == "auth/token/lookup-self":
		return "token.lookup-self"
	case path == "sys/capabilities-self":
		return "sys.capabilities"
	case len(parts) == 5 && parts[0] == "auth" && parts[2] == "role":
		return "approle." + parts[4]
	case len(parts) == 4 && parts[0] == "auth" && parts[2] == "role":
		return "approle.role." + verb
	case len(parts) > 2 && parts[1] == "metadata":
		return "kv.delete"
	}
	return "kv." + verb
}

// answerFault writes a status fault: Vault's JSON error document for 500 and 429 (its own rate
// limiter), a proxy page for 502 and 503.
func answerFault(w http.ResponseWriter, status int) {
	if status == http.StatusInternalServerError || status == http.StatusTooManyRequests {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"errors":["injected fault"]}`))
		return
	}
	simfault.ProxyPage(w, status)
}

// discardWriter swallows the answer of a request whose response is lost.
type discardWriter struct{ header http.Header }

func (d discardWriter) Header() http.Header         { return d.header }
func (d discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d discardWriter) WriteHeader(int)             {}

// authenticate checks X-Vault-Token and spends one of its uses.
func (c *call) authenticate() bool {
	t := c.s.tokens[c.r.Header.Get("X-Vault-Token")]
	if t == nil || (!t.expires.IsZero() && !c.s.now().Before(t.expires)) {
		c.fail(http.StatusForbidden, "permission denied")
		return false
	}
	c.tok = t
	if t.uses > 0 {
		if t.uses--; t.uses == 0 {
			delete(c.s.tokens, c.r.Header.Get("X-Vault-Token"))
		}
	}
	return true
}

func (c *call) route() {
	p := c.path
	switch {
	case p == "auth/token/lookup-self" && c.r.Method == http.MethodGet:
		c.lookupSelf()
	case p == "sys/capabilities-self":
		c.capabilitiesSelf()
	case strings.HasPrefix(p, "sys/policies/acl/"):
		c.policy(strings.TrimPrefix(p, "sys/policies/acl/"), "policy")
	case strings.HasPrefix(p, "sys/policy/"):
		c.policy(strings.TrimPrefix(p, "sys/policy/"), "rules")
	case p == "sys/auth" && c.r.Method == http.MethodGet:
		c.authMounts()
	case strings.HasPrefix(p, "sys/internal/ui/mounts/") && c.r.Method == http.MethodGet:
		c.mountInfo(strings.TrimPrefix(p, "sys/internal/ui/mounts/"))
	case strings.HasPrefix(p, "auth/"):
		c.approle(strings.TrimPrefix(p, "auth/"))
	default:
		c.kvRoute()
	}
}

func (c *call) reply(code int, body any) {
	c.w.Header().Set("Content-Type", "application/json")
	c.w.WriteHeader(code)
	if body != nil {
		_ = json.NewEncoder(c.w).Encode(body)
	}
}

func (c *call) noContent() { c.w.WriteHeader(http.StatusNoContent) }

func (c *call) fail(code int, msg string) {
	c.reply(code, map[string]any{"errors": []string{msg}})
}

// fields checks the body has only allowed keys.
func (c *call) fields(allowed ...string) bool {
	for k := range c.body {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			c.fail(http.StatusBadRequest, "unknown field "+k)
			return false
		}
	}
	return true
}

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
