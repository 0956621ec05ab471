package backends

import (
	"context"
	"errors"
)

// Provisioner creates, changes and removes backend objects for resources. Every method is
// idempotent: Create adopts an object that already exists for the same resource, Delete of a
// missing object succeeds.
type Provisioner interface {
	// Create makes sure the backend object for req exists, complete, with req.Resource.Limits,
	// and returns its identity. When req.Resource.BackendID is set it first looks for that object
	// and completes it (a crash or failure may have left it half made). It returns an error
	// wrapping ErrDuplicate when req.Name is taken by an object that belongs to a different
	// resource; the caller then tries another name. When it fails after making the object, it
	// returns the object's id with the error so the agent can record it (for cleanup and adoption).
	Create(ctx context.Context, req CreateRequest) (Info, error)
	// Lookup returns the backend object with that id, or an error wrapping ErrNotFound.
	Lookup(ctx context.Context, res Resource) (Info, error)
	// SetLimits applies new limits (backend units) to an existing object.
	SetLimits(ctx context.Context, res Resource, limits Quantities) error
	// Delete removes the backend object and everything that belongs only to it.
	Delete(ctx context.Context, res Resource) error
}

// MembershipManager grants and revokes users' access to a resource.
type MembershipManager interface {
	// Members lists the usernames that currently have access.
	Members(ctx context.Context, res Resource) ([]string, error)
	AddMembers(ctx context.Context, res Resource, members []Member) error
	RemoveMembers(ctx context.Context, res Resource, usernames []string) error
}

// UsageReporter measures usage. Resources without data are absent from the returned map, which
// is keyed by backend id.
type UsageReporter interface {
	Usage(ctx context.Context, resources []Resource, period Period, current bool) (map[string]Usage, error)
}

// GaugeUsage is implemented by usage reporters whose figures are current allocations (they can
// go down within a month, e.g. the quota used by running pods) rather than running totals; the
// report mode then does not treat a decrease as an anomaly.
type GaugeUsage interface {
	UsageIsGauge() bool
}

// Pinger is implemented by backends that can check they are reachable; a failing ping skips the
// offering's cycle (orders and resources stay untouched), unless the error wraps
// ErrAccessNotReady.
type Pinger interface {
	Ping(ctx context.Context) error
}

// ErrAccessNotReady is wrapped by a Ping error when the backend itself is ready but the service
// through which it grants access is not (Keycloak behind Rancher): orders, quota reconciliation
// and usage reports go on, membership changes wait, and the backend's own access steps (e.g. a
// new resource's group) fail with transient errors wrapping it until the service answers.
var ErrAccessNotReady = errors.New("access management not ready")

// Diagnoser reports a backend's health for the diagnostics command: one Probe per upstream it
// talks to.
type Diagnoser interface {
	Probes() []Probe
}

// Probe is one upstream's diagnostics: the checks of one service the backend talks to, in order
// (a later check may need an earlier one to pass, and is then left out). The diagnostics command
// runs every probe of every offering at once, each under its own deadline (ctx), so a slow or
// unreachable service costs at most one deadline and never hides another service's lines.
type Probe struct {
	Upstream string // the service it checks: "rancher", "kubernetes", "keycloak", "openstack", "vault", …
	Run      func(ctx context.Context) []Check
}

// Reconciler repairs drift on every membership pass: objects that should exist but were
// deleted or changed behind the agent's back are put right.
type Reconciler interface {
	Reconcile(ctx context.Context, res Resource) error
}

// StatusController applies Waldur's paused / downscaled flags. Restore is called on every pass
// for resources that are neither, so it must be cheap when nothing changes.
type StatusController interface {
	Pause(ctx context.Context, res Resource) error
	Downscale(ctx context.Context, res Resource) error
	Restore(ctx context.Context, res Resource) error
}

// LimitsReader reports the limits the backend enforces (backend units); membership sync pushes
// them to Waldur when they differ (the backend is the source of truth for enforced limits).
type LimitsReader interface {
	Limits(ctx context.Context, res Resource) (Quantities, error)
}

// MetadataReader returns backend facts shown on the Waldur resource (backend_metadata).
type MetadataReader interface {
	Metadata(ctx context.Context, res Resource) (map[string]any, error)
}

// OrderEvaluator decides on orders waiting for the provider's approval.
type OrderEvaluator interface {
	Evaluate(ctx context.Context, review OrderReview) (Decision, string, error)
}

// Closer releases connections when the agent stops.
type Closer interface {
	Close() error
}
