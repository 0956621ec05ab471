package ranchersim

import (
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/waldur/site-agent/internal/sim/simfault"
	"github.com/waldur/site-agent/internal/sim/simhttp"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Upstream is the Kubernetes API server behind every simulated cluster.
type Upstream struct {
	Host   string // https://127.0.0.1:<port>
	Token  string // admin bearer token
	CAData []byte // PEM of the CA of the server's certificate
}

// Options configure a Server. The zero value is usable (no Kubernetes behind it).
type Options struct {
	AccessKey string // default "token-sim01"
	SecretKey string // default "sim-secret"
	// Clusters are the cluster ids that exist (default "c-m-sim00001"); all share Upstream.
	Clusters []string
	// RoleTemplates are the role template ids bindings may use (default workloads-manage,
	// project-member, project-owner, read-only).
	RoleTemplates []string
	// Upstream is the Kubernetes API server; nil makes /k8s and namespace routes answer 503.
	Upstream *Upstream
	// Downstream is the Kubernetes API server of the clusters made through the v1 provisioning
	// API (downstream.go); nil: their Nodes are the simulator's records (etcdnodes.go).
	Downstream *Upstream
	// PageSize is the default page size of collections (norman's default 1000).
	PageSize int
	// TokenExpiresAt is reported for the API token (empty: never).
	TokenExpiresAt string
	// ProvisionDeleteDelay is how long a deleted v1 cluster shows its deletionTimestamp
	// (default 100 ms); NodeActiveAfter how long a registered node is "registering" (default
	// 100 ms); DrainDuration how long a drain takes (default 100 ms).
	ProvisionDeleteDelay, NodeActiveAfter, DrainDuration time.Duration
	// RemoveDelay is how long a deleted project or project role template binding is still listed,
	// with `removed` set, while Rancher's controllers run its finalizers (removal.go; default
	// 100 ms).
	RemoveDelay time.Duration
	// ControllerDelay is how long after an object's create Rancher's controllers fill what they
	// fill (controllers.go: a provisioning cluster's management id, its default registration
	// token, a token's manifest URL and commands; default 50 ms).
	ControllerDelay time.Duration
	// ConnectedCheckInterval is how often an active imported cluster's agent is checked
	// (GET http://not-used/ping through its steve session, clusterconnected.go; default 15 s,
	// Rancher's); CleanupRetryInterval the wait between the three attempts at the cleanup Rancher
	// deploys through the tunnel when such a cluster is deleted (default 3 s, Rancher's).
	ConnectedCheckInterval, CleanupRetryInterval time.Duration
	// StatsInterval is how often an active imported cluster's Nodes are listed again through
	// its tunnel for its totals (default 1 min; Rancher watches them instead).
	StatsInterval time.Duration
	// NamespaceDelay is how long after its create a cluster's namespace (c-xxxxx, where its
	// registration tokens live) is missing, so that a registration token POSTed meanwhile is
	// answered 404 `namespaces "c-xxxxx" not found` (default 50 ms; negative: never). See
	// createTokenCRT.
	NamespaceDelay time.Duration
	// UpgradeStepDuration is how long a node being upgraded stays cordoned (default 50 ms).
	UpgradeStepDuration time.Duration
	// Seed makes generated ids deterministic.
	Seed int64
	// Logf, when set, receives one line per request.
	Logf func(format string, args ...any)
}

// Server is the simulator; it is an http.Handler, safe for concurrent use.
type Server struct {
	opts  Options
	proxy *httputil.ReverseProxy
	kube  kubernetes.Interface // nil without upstream

	mu          sync.Mutex
	st          *state
	calls       map[string]int
	violations  []string
	tokens      map[string]*Token            // cluster registration tokens by id
	tun         *tunnels                     // the agent connect endpoint (tunnel.go)
	prov        map[string]*provCluster      // v1 provisioning clusters by name (provisioning.go)
	nodes       map[string]*simNode          // v3 nodes by id (nodes.go)
	crtbs       map[string]*crtb             // cluster role template bindings by id (crtb.go)
	hung        map[string]bool              // node names whose drains never finish
	kubeconfigs map[string][]string          // kubeconfig tokens by cluster id (kubeconfig.go)
	cleanups    map[string]CleanupResult     // what deleting an imported cluster deployed (cleanup.go)
	nodeAnn     map[string]map[string]string // downstream Node annotations by v3 node id (etcdnodes.go)
	etcdRemover EtcdRemover                  // the emulated etcd (etcdnodes.go)
	secrets     map[string]*simSecret        // fleet-default's secrets by name (secrets.go)
	upgrader    Upgrader                     // the node emulator's upgrade job (upgrade.go)
	rollouts    map[string]*rollout          // upgrades in progress by cluster id
	rolloutGen  int
	upgradeLog  []string
	upgradeMax  map[string]int // the largest batch an upgrade cordoned, by role ("server", "agent")
	installer   []byte         // served at SystemAgentInstallPath (nodes.go)
	down        *downstream    // Options.Downstream (downstream.go)

	*simfault.Injector // SetFaults, FailNext, FaultLog
}

// New returns a simulator. It panics on an unusable Upstream (a test setup error).
func New(o Options) *Server {
	if o.AccessKey == "" {
		o.AccessKey = "token-sim01"
	}
	if o.SecretKey == "" {
		o.SecretKey = "sim-secret"
	}
	if len(o.Clusters) == 0 {
		o.Clusters = []string{"c-m-sim00001"}
	}
	if len(o.RoleTemplates) == 0 {
		o.RoleTemplates = []string{"workloads-manage", "project-member", "project-owner", "read-only"}
	}
	if o.PageSize <= 0 {
		o.PageSize = 1000
	}
	for _, d := range []*time.Duration{&o.ProvisionDeleteDelay, &o.NodeActiveAfter, &o.DrainDuration, &o.RemoveDelay} {
		if *d <= 0 {
			*d = 100 * time.Millisecond
		}
	}
	if o.UpgradeStepDuration <= 0 {
		o.UpgradeStepDuration = 50 * time.Millisecond
	}
	if o.ConnectedCheckInterval <= 0 {
		o.ConnectedCheckInterval = 15 * time.Second
	}
	if o.CleanupRetryInterval <= 0 {
		o.CleanupRetryInterval = 3 * time.Second
	}
	if o.StatsInterval <= 0 {
		o.StatsInterval = time.Minute
	}
	if o.NamespaceDelay == 0 {
		o.NamespaceDelay = 50 * time.Millisecond
	}
	if o.ControllerDelay == 0 {
		o.ControllerDelay = 50 * time.Millisecond
	}
	s := &Server{opts: o, st: newState(o), calls: map[string]int{}, tokens: map[string]*Token{},
		prov: map[string]*provCluster{}, nodes: map[string]*simNode{}, crtbs: map[string]*crtb{}, hung: map[string]bool{},
		cleanups: map[string]CleanupResult{}, secrets: map[string]*simSecret{}, Injector: simfault.New(faultProfile)}
	s.tun = newTunnels()
	if o.Upstream != nil {
		s.proxy, s.kube = newUpstream(o.Upstream)
	}
	if o.Downstream != nil {
		s.down = &downstream{}
		s.down.proxy, s.down.kube = newUpstream(o.Downstream)
	}
	return s
}

// Token is the "access:secret" pair the simulator accepts.
func (s *Server) Token() string { return s.opts.AccessKey + ":" + s.opts.SecretKey }

func newUpstream(u *Upstream) (*httputil.ReverseProxy, kubernetes.Interface) {
	target, err := url.Parse(u.Host)
	if err != nil {
		panic("ranchersim: upstream host: " + err.Error())
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(u.CAData)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = target.Scheme, target.Host
			pr.Out.URL.Path = pr.In.URL.Path // already stripped by the handler
			pr.Out.URL.RawPath = ""
			pr.Out.Host = target.Host
			pr.Out.Header.Set("Authorization", "Bearer "+u.Token)
		},
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 32}, // as Rancher's client-go transports: no handshake per request
		FlushInterval: -1,
	}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: u.Host, BearerToken: u.Token, QPS: 200, Burst: 400,
		TLSClientConfig: rest.TLSClientConfig{CAData: u.CAData}, Timeout: 30 * time.Second})
	if err != nil {
		panic("ranchersim: upstream client: " + err.Error())
	}
	return rp, cs
}

// ServeHTTP authenticates, routes, counts, maybe injects a fault, and answers.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := simhttp.NewRecorder(w)
	s.serve(rec, r)
	if s.opts.Logf != nil {
		s.opts.Logf("ranchersim: %s %s -> %d", r.Method, r.URL.RequestURI(), rec.Status())
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if op, h := s.publicRoute(r); h != nil {
		s.count(op)
		h(w, r)
		return
	}
	if !s.authorized(r.Header.Get("Authorization")) {
		writeError(w, http.StatusUnauthorized, "Unauthorized", "must authenticate")
		return
	}
	rt, ok := s.route(r)
	if !ok.found {
		writeError(w, http.StatusNotFound, "NotFound", "not found")
		return
	}
	if !ok.methodOK {
		w.Header().Set("Allow", strings.Join(ok.allow, ", "))
		writeError(w, http.StatusMethodNotAllowed, "MethodNotAllow", "Method "+r.Method+" not supported")
		return
	}
	s.count(rt.op)
	if kind, hit := s.Pick(rt.op); hit {
		if kind.AppliesRequest() {
			rt.handler(discardWriter{header: http.Header{}}, r)
		}
		simfault.Write(w, kind, answerFault)
		return
	}
	rt.handler(w, r)
}

// authorized accepts "Bearer access:secret" and Basic access/secret.
func (s *Server) authorized(h string) bool {
	want := s.Token()
	switch {
	case strings.HasPrefix(h, "Bearer "):
		return subtle.ConstantTimeCompare([]byte(strings.TrimPrefix(h, "Bearer ")), []byte(want)) == 1
	case strings.HasPrefix(h, "Basic "):
		raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(h, "Basic "))
		return err == nil && subtle.ConstantTimeCompare(raw, []byte(want)) == 1
	}
	return false
}

func (s *Server) count(op string) {
	s.mu.Lock()
	s.calls[op]++
	s.mu.Unlock()
}

func (s *Server) violation(format string, args ...any) {
	s.mu.Lock()
	s.violationLocked(format, args...)
	s.mu.Unlock()
}

// violationLocked records a violation (s.mu held).
func (s *Server) violationLocked(format string, args ...any) {
	s.violations = append(s.violations, fmt.Sprintf(format, args...))
}

// discardWriter swallows a response (lost-response faults apply the request, then reset).
type discardWriter struct{ header http.Header }

func (d discardWriter) Header() http.Header         { return d.header }
func (d discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d discardWriter) WriteHeader(int)             {}
