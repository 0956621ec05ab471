package backends

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/upstream"
)

// Params is what a backend constructor receives.
type Params struct {
	Offering   string     // offering name, for log fields and object descriptions
	Settings   Settings   // the offering's backend_settings section
	Components Components // the offering's backend_components
	Logger     *zap.Logger
	// DryRun asks the backend to perform no writes. Decorators enforce it as well, so a backend
	// only needs to look at it if it writes during construction.
	DryRun bool
	// Secrets stores credentials the backend creates (e.g. a tenant user's password); nil when
	// the configuration has no secrets store (vault section). The agent's is the one Vault
	// client of its vault section, a *vault.Admin (internal/clients/vault): a backend that
	// manages Vault objects of its own (rke2: per-cluster policies and AppRoles) asserts that.
	Secrets SecretStore
	// Upstreams are the timeouts and retries of the configuration's upstreams section, by
	// upstream name; a backend applies those of the upstreams it talks to (its own
	// backend_settings win where they set the same thing).
	Upstreams upstream.Upstreams
}

// SecretStore keeps credentials out of Waldur and logs. Paths are "<mount>/<path>".
type SecretStore interface {
	Put(ctx context.Context, path string, data map[string]string) error
	Get(ctx context.Context, path string) (map[string]string, error) // ErrNotFound when absent
	Delete(ctx context.Context, path string) error                   // absent is not an error
}

// Backend is any value implementing one or more role interfaces.
type Backend any

// Constructor builds a backend. It validates its own settings and returns an error naming the
// offending key; it must not make network calls (diagnostics and the first cycle do that).
// Warnings (unknown or ignored keys) are returned to the caller rather than logged.
type Constructor func(p Params) (b Backend, warnings []string, err error)

// Registry maps backend names (the values of order_processing_backend, membership_sync_backend,
// reporting_backend) to constructors. It is assembled explicitly in one place (no init()).
type Registry struct {
	ctors map[string]Constructor
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{ctors: map[string]Constructor{}} }

// Register adds a constructor under name; registering a name twice panics (a wiring bug).
func (r *Registry) Register(name string, c Constructor) {
	if _, dup := r.ctors[name]; dup {
		panic("backends: duplicate registration of " + name)
	}
	r.ctors[name] = c
}

// Names lists the registered backend names, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.ctors))
	for n := range r.ctors {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Has reports whether name is registered.
func (r *Registry) Has(name string) bool { _, ok := r.ctors[name]; return ok }

// New constructs the backend registered under name.
func (r *Registry) New(name string, p Params) (Backend, []string, error) {
	c, ok := r.ctors[name]
	if !ok {
		return nil, nil, fmt.Errorf("unknown backend %q (known: %s)", name, strings.Join(r.Names(), ", "))
	}
	return c(p)
}
