package rke2

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
)

// NodeVault is what the executor needs of Vault (ClusterVault implements it).
type NodeVault interface {
	// Ensure (bootstrap rancher): policy, AppRole and the secret with the registration token.
	Ensure(ctx context.Context, cluster string, token secret.Secret) error
	// EnsureJoin (bootstrap rke2): policy, AppRole and the secret whose join token is made once
	// (only when mayCreate) and kept for the cluster's life (joinsecret.go).
	EnsureJoin(ctx context.Context, cluster string, js JoinSecret, mayCreate bool) error
	NodeCredentials(ctx context.Context, cluster string) (VaultCredentials, error)
	// RemoveAccess deletes the policy and AppRole; Remove deletes the secret too.
	RemoveAccess(ctx context.Context, cluster string) error
	Remove(ctx context.Context, cluster string) error
	Check(ctx context.Context) backends.Check
}

var _ NodeVault = (*ClusterVault)(nil)

// Deps are the backend's upstreams and tuning.
type Deps struct {
	Infra   Infra
	Rancher Rancher
	Vault   NodeVault
	// ArgoCD, when set, has every ready cluster registered (argocd_k8s_* settings).
	ArgoCD ArgoCD
	Log    *zap.Logger
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// Backend carries out rke2 orders: one Waldur resource is one cluster. Every call derives what
// to do from what OpenStack and Rancher show (level-triggered), so any call may be repeated, or
// interrupted at any point, and the next one continues.
type Backend struct {
	s          *Settings
	d          Deps
	components backends.Components
	day2       *day2State
	pinged     atomic.Bool // a full Ping passed in this process
	*Evaluator
}

// NewBackend assembles the backend from validated settings, the offering's components and its
// upstreams.
func NewBackend(s *Settings, comps backends.Components, d Deps) *Backend {
	if d.Log == nil {
		d.Log = zap.NewNop()
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Backend{s: s, d: d, components: comps, day2: newDay2State(),
		Evaluator: &Evaluator{Settings: s, Flavors: d.Infra, Names: d.Rancher, Versions: d.Rancher}}
}

// Create builds the cluster an order describes, a step per call: it returns the backend id
// (the cluster name) with an error wrapping failure.ErrNotReady until every node is ready, so
// the order stays executing and the next cycle continues. A resource without a backend id
// whose cluster was made earlier (its id lost) gets that cluster back (adopt.go).
func (b *Backend) Create(ctx context.Context, req backends.CreateRequest) (backends.Info, error) {
	spec, err := ParseSpec(b.s, req.Resource)
	if err != nil {
		return backends.Info{}, failure.Errorf("%v", err)
	}
	defer b.day2.lock(req.Resource.UUID)()
	if spec.Name, err = b.clusterName(ctx, ClusterRef{UUID: req.Resource.UUID, Name: spec.Name}, req.Resource.BackendID); err != nil {
		return backends.Info{}, err
	}
	return b.reconcile(ctx, req.Resource.UUID, &spec, "")
}

// SetLimits scales the cluster to the counts in limits (the server and worker node
// components) and, when the Update order asks for a Kubernetes version (new_options), upgrades
// it once scaled (upgrade.go); the same reconciliation as Create, so it also finishes an
// interrupted one.
func (b *Backend) SetLimits(ctx context.Context, res backends.Resource, limits backends.Quantities) error {
	if res.BackendID == "" {
		return failure.Errorf("the cluster was never created")
	}
	res.Limits = limits
	spec, err := ParseSpec(b.s, res)
	if err != nil {
		return failure.Errorf("%v", err)
	}
	if err := checkLimitCounts(b.s, limits); err != nil {
		return err
	}
	target, err := requestedVersion(res.Attributes)
	if err != nil {
		return err
	}
	defer b.day2.lock(res.UUID)()
	spec.Name = res.BackendID
	// The evaluator judged only the counts; the scaled cluster's flavors and totals are
	// checked here, against the resource's own attributes.
	flavors, err := b.resolve(ctx, &spec)
	if err != nil {
		return err
	}
	if err := Check(b.s, &spec, flavors); err != nil {
		return err
	}
	_, err = b.reconcile(ctx, res.UUID, &spec, target)
	return err
}

// Lookup reports the cluster when OpenStack still has any of its servers.
func (b *Backend) Lookup(ctx context.Context, res backends.Resource) (backends.Info, error) {
	if res.BackendID == "" {
		return backends.Info{}, fmt.Errorf("resource %s has no cluster: %w", res.UUID, failure.ErrNotFound)
	}
	servers, err := b.d.Infra.Servers(ctx, ClusterRef{UUID: res.UUID, Name: res.BackendID})
	if err != nil {
		return backends.Info{}, err
	}
	if len(servers) == 0 {
		return backends.Info{}, fmt.Errorf("cluster %s has no servers: %w", res.BackendID, failure.ErrNotFound)
	}
	return backends.Info{BackendID: res.BackendID}, nil
}

// pingFresh: a Rancher answer this recent stands for a ping — a cycle that works on an order
// talks to Rancher anyway, so the next cycle's ping would only repeat what it showed.
const pingFresh = 30 * time.Second

// Ping checks that Rancher answers. Until it has once passed in this process, with every
// check of the diagnostics (the v3 and v1 APIs and the key's rights on provisioning
// clusters); from then on with one request (Rancher.Ping), none when Rancher answered less
// than pingFresh ago — so an idle cycle asks Rancher one question at most. OpenStack, Vault and
// the image and flavors are the diagnostics' business, not every cycle's.
func (b *Backend) Ping(ctx context.Context) error {
	if b.pinged.Load() {
		if err := b.d.Rancher.Ping(ctx, pingFresh); err != nil {
			return failure.Transient(fmt.Errorf("rancher: %w", err))
		}
		return nil
	}
	var errs []error
	for _, c := range b.d.Rancher.Diagnose(ctx) {
		if !c.OK {
			errs = append(errs, fmt.Errorf("%s: %s", c.Name, c.Detail))
		}
	}
	if len(errs) > 0 {
		return failure.Transient(errors.Join(errs...))
	}
	b.pinged.Store(true)
	return nil
}

// Probes implements backends.Diagnoser: Rancher, Vault, Argo CD (when configured) and OpenStack,
// each on its own.
func (b *Backend) Probes() []backends.Probe {
	one := func(check func(context.Context) backends.Check) func(context.Context) []backends.Check {
		return func(ctx context.Context) []backends.Check { return []backends.Check{check(ctx)} }
	}
	probes := []backends.Probe{{Upstream: "rancher", Run: b.d.Rancher.Diagnose}, {Upstream: "vault", Run: one(b.d.Vault.Check)}}
	if b.d.ArgoCD != nil {
		probes = append(probes, backends.Probe{Upstream: "argocd", Run: one(b.d.ArgoCD.Check)})
	}
	return append(probes, backends.Probe{Upstream: "openstack", Run: b.d.Infra.Diagnose})
}

// notReady is the error of a call that made progress (or waits) but has not finished.
func notReady(c ClusterRef, format string, args ...any) error {
	return fmt.Errorf("cluster %s: %s: %w", c.Name, fmt.Sprintf(format, args...), failure.ErrNotReady)
}
