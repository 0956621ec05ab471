package rancher

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/clients/keycloak"
	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/upstream"
)

// directory is what the backend needs from Keycloak; *keycloak.Client implements it.
type directory interface {
	Ping(ctx context.Context) error
	Diagnose(ctx context.Context) []keycloak.Line
	EnsureChildGroup(ctx context.Context, parent, parentDesc, child, childDesc string) (string, bool, error)
	FindChildGroup(ctx context.Context, parent, child string) (string, bool, error)
	FindUser(ctx context.Context, ident string, byID bool) (keycloak.User, bool, error)
	Members(ctx context.Context, groupID string) ([]keycloak.User, error)
	AddMember(ctx context.Context, userID, groupID string) error
	RemoveMember(ctx context.Context, userID, groupID string) error
	DeleteGroup(ctx context.Context, groupID string) error
	DeleteParentIfEmpty(ctx context.Context, parent string) (bool, error)
	Close() error
}

// Backend is the rancher backend without Keycloak: projects, namespaces, quotas and usage. It
// has no membership role (access is granted through Keycloak groups only).
type Backend struct {
	cfg   *config
	comps backends.Components
	log   *zap.Logger
	v3    *rancherapi.Client
	kube  *kubeClient
	kc    directory // nil without Keycloak

	// invTTL is how long one pass lasts for the caches: how long one cluster-wide listing serves
	// Reconcile, Limits and Metadata, one project listing serves Create, and one member list of
	// a Keycloak group serves every resource bound to it (one read per pass instead of several
	// requests per resource).
	invTTL time.Duration
	invMu  sync.Mutex
	inv    *inventory

	names nameIndex          // the cluster's projects by name, for Create (one listing per pass)
	reads singleflight.Group // concurrent member reads of one group share one request
	adds  [32]sync.Mutex     // member additions to one group (striped by name) run one at a time
	acc   accessState        // whether Keycloak answered the last ping

	kcMu    sync.Mutex
	aliases map[string]string       // Keycloak user id → offering username it was matched by (fallback, case)
	missing map[string][]string     // child group name → offering usernames not found in Keycloak
	snaps   map[string]memberSnap   // child group name → its members, read at most once per pass
	byIdent map[string]keycloakUser // offering username → Keycloak user, from the last member read
	groups  map[string]string       // project id → child group recorded on the project
}

// WithKeycloak is the rancher backend with keycloak_enabled: it adds membership (Keycloak
// child-group members) to Backend.
type WithKeycloak struct{ *Backend }

// Option adjusts a backend (tests).
type Option func(*Backend)

// WithInventoryTTL sets how long a cluster-wide listing is reused (0 = not at all).
func WithInventoryTTL(d time.Duration) Option { return func(b *Backend) { b.invTTL = d } }

// New is the registry constructor. It validates the settings and builds the clients; it makes
// no network calls.
func New(p backends.Params) (backends.Backend, []string, error) {
	return NewWithOptions(p, nil)
}

// NewWithOptions is New with options for Keycloak (e.g. an HTTP client) and the backend.
func NewWithOptions(p backends.Params, kcOpts []keycloak.Option, opts ...Option) (backends.Backend, []string, error) {
	cfg, warnings, err := parseSettings(p.Settings, p.Components)
	if err != nil {
		return nil, warnings, err
	}
	log := p.Logger
	if log == nil {
		log = zap.NewNop()
	}
	b := &Backend{cfg: cfg, comps: p.Components, log: log, invTTL: 20 * time.Second,
		aliases: map[string]string{}, missing: map[string][]string{},
		snaps: map[string]memberSnap{}, byIdent: map[string]keycloakUser{}, groups: map[string]string{}}
	cfg.up = p.Upstreams
	if b.v3, err = newRancherClient(cfg, cfg.settingsFor(upstream.Rancher), log); err != nil {
		return nil, warnings, err
	}
	if b.kube, err = newKubeClient(b.v3, cfg.clusterID, cfg.settingsFor(upstream.Kubernetes)); err != nil {
		return nil, warnings, err
	}
	for _, o := range opts {
		o(b)
	}
	if !cfg.keycloak {
		return b, warnings, nil
	}
	kc, err := keycloak.New(keycloak.Config{URL: cfg.kc.URL, Realm: cfg.kc.Realm, UserRealm: cfg.kc.UserRealm,
		ClientID: cfg.kc.ClientID, Username: cfg.kc.Username, Password: cfg.kc.Password,
		VerifyTLS: *cfg.kc.SSLVerify, Timeout: cfg.timeoutFor(upstream.Keycloak)}, log.With(zap.String("upstream", "keycloak")),
		append([]keycloak.Option{keycloak.WithUpstream(p.Upstreams.Get(upstream.Keycloak))}, kcOpts...)...)
	if err != nil {
		return nil, warnings, err
	}
	b.kc = kc
	return &WithKeycloak{Backend: b}, warnings, nil
}

// newRancherClient is the shared Rancher client for the offering's backend_url and API key.
func newRancherClient(cfg *config, up upstream.Settings, log *zap.Logger) (*rancherapi.Client, error) {
	return rancherapi.New(rancherapi.Config{URL: cfg.baseURL, Token: secret.New(cfg.accessKey + ":" + cfg.secretKey.Reveal()),
		TLS: rancherapi.TLS{Insecure: !cfg.verifyTLS}, Upstream: up}, log)
}

// Close implements backends.Closer.
func (b *Backend) Close() error {
	if b.kc != nil {
		return b.kc.Close()
	}
	return nil
}

// logger is the backend's logger inside an operation: with the order or resource the caller
// named in ctx (backends.Log).
func (b *Backend) logger(ctx context.Context) *zap.Logger { return backends.Log(ctx, b.log) }
