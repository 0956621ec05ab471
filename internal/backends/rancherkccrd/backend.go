package rancherkccrd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/upstream"
)

// Name is the backend's name in the configuration (membership_sync_backend).
const Name = "rancher-kc-crd"

// defaultRetry bounds retries of one Kubernetes request.
var defaultRetry = upstream.RetryPolicy{Max: 4, WaitMin: 200 * time.Millisecond, WaitMax: 5 * time.Second}

// The roles the backend serves; the build fails when a method drifts from its interface.
var (
	_ backends.ProjectSyncer = (*Backend)(nil)
	_ backends.Pinger        = (*Backend)(nil)
	_ backends.Diagnoser     = (*Backend)(nil)
)

// Backend writes ManagedRancherProject custom resources and reads their status.
type Backend struct {
	cfg  *config
	kube *crClient
	log  *zap.Logger

	warned sync.Map // unmapped roles already warned about ("scope/role")
}

// New builds the backend from backend_settings (spec/rancher.md §3.1). It reads the
// kubeconfig (or the pod's service account) and makes no network call.
func New(p backends.Params) (backends.Backend, []string, error) {
	c, warnings, err := parseSettings(p.Settings)
	if err != nil {
		return nil, warnings, err
	}
	rc, err := restConfig(c)
	if err != nil {
		return nil, warnings, err
	}
	up := p.Upstreams.Get(upstream.Kubernetes)
	rc.Timeout = up.TimeoutOr(30 * time.Second)
	rc.UserAgent = "site-agent-" + Name
	log := p.Logger
	if log == nil {
		log = zap.NewNop()
	}
	kube, err := newCRClient(rc, c.namespace, up.RetryPolicy().Or(defaultRetry), log.With(zap.String("upstream", "kubernetes")))
	if err != nil {
		return nil, warnings, fmt.Errorf("backend_settings.kubeconfig_path: %w", err)
	}
	return &Backend{cfg: c, kube: kube, log: log}, warnings, nil
}

// WantsResourceGrants implements backends.ProjectSyncer: the resource's own roles are needed
// only for the cluster bindings.
func (b *Backend) WantsResourceGrants() bool { return len(b.cfg.clusterRoleMap) > 0 }

// SyncProjects writes one custom resource per resource project, reads each one's status back,
// removes the resource's custom resources whose resource project is gone, and reports.
func (b *Backend) SyncProjects(ctx context.Context, req backends.ProjectSync) (backends.ProjectReport, error) {
	res := req.Resource
	log := backends.Log(backends.ForResource(ctx, res.UUID), b.log).With(zap.String("resource", res.UUID), zap.String("cluster", res.BackendID))
	b.warnUnmapped(log, "cluster_role_map", req.ResourceGrants, b.cfg.clusterRoleMap)
	cluster, clusterErr := b.cfg.clusterBindings(res, req.ResourceGrants)
	var rep backends.ProjectReport
	expected := map[string]bool{}
	var seen []observed
	var entries []map[string]any
	for _, rp := range req.Projects {
		b.warnUnmapped(log, "role_map", rp.Grants, b.cfg.roleMap)
		d := b.cfg.buildDesired(res, rp, cluster)
		if d.err == nil && clusterErr != nil {
			d.err = clusterErr
		}
		expected[d.name] = true
		o, buildErr, err := b.write(ctx, d, req.DryRun)
		if err != nil {
			return backends.ProjectReport{}, fmt.Errorf("resource project %s (%s): %w", rp.Name, d.projectUUID, err)
		}
		if o.present {
			seen = append(seen, o)
			entries = append(entries, o.metadata(d.name, d.projectUUID))
		}
		rep.Projects = append(rep.Projects, outcome(d.projectUUID, o, buildErr))
		rep.Grants = append(rep.Grants, b.cfg.projectGrants(rp, o, buildErr)...)
	}
	if req.ResourceGrants != nil && len(b.cfg.clusterRoleMap) > 0 {
		rep.Grants = append(rep.Grants, b.cfg.clusterGrants(req.ResourceGrants, seen)...)
	}
	if err := b.prune(ctx, log, res.UUID, expected, req.DryRun); err != nil {
		return backends.ProjectReport{}, err
	}
	if entries == nil {
		entries = []map[string]any{}
	}
	rep.Metadata = map[string]any{"namespace": b.cfg.namespace, "managed_rancher_projects": sortedEntries(entries)}
	return rep, nil
}

// write applies one custom resource and observes it. buildErr is why this resource project's
// custom resource could not be written (its own fault: a template, or content the API server
// refuses); err fails the whole resource (Kubernetes unreachable, forbidden).
func (b *Backend) write(ctx context.Context, d desired, dryRun bool) (o observed, buildErr string, err error) {
	if d.err != nil {
		return observed{}, "The Rancher project cannot be described to the operator: " + d.err.Error(), nil
	}
	obj, err := b.kube.apply(ctx, d, dryRun)
	switch {
	case isStatus(err, http.StatusUnprocessableEntity) || isStatus(err, http.StatusBadRequest):
		return observed{}, "Kubernetes refused the ManagedRancherProject " + d.name + ": " + statusMessage(err), nil
	case err != nil:
		return observed{}, "", err
	case obj == nil:
		return observed{}, "", nil // dry run: it does not exist yet
	}
	return b.observe(ctx, obj), "", nil
}

func (b *Backend) observe(ctx context.Context, obj *unstructured.Unstructured) observed {
	st, stale, ok := readStatus(obj.Object["status"], obj.GetGeneration())
	if !ok {
		backends.Log(ctx, b.log).Warn("status of a ManagedRancherProject cannot be read; taken as in progress", zap.String("name", obj.GetName()))
	}
	return observed{present: true, stale: stale, status: st}
}

// prune deletes the custom resources labelled with the resource's UUID that this pass did not
// write: their resource project is gone. Objects without the label are never selected. A
// failed delete is retried on the next pass.
func (b *Backend) prune(ctx context.Context, log *zap.Logger, resourceUUID string, expected map[string]bool, dryRun bool) error {
	items, err := b.kube.list(ctx, labelResource+"="+hexUUID(resourceUUID), 500)
	if err != nil {
		return fmt.Errorf("list ManagedRancherProjects: %w", err)
	}
	for _, it := range items {
		if expected[it.GetName()] {
			continue
		}
		if dryRun {
			log.Info("dry run: would delete the ManagedRancherProject of a removed resource project", zap.String("name", it.GetName()))
			continue
		}
		if err := b.kube.delete(ctx, it.GetName(), it.GetUID()); err != nil {
			log.Warn("could not delete the ManagedRancherProject of a removed resource project; retrying next pass",
				zap.String("name", it.GetName()), zap.Error(err))
			continue
		}
		log.Info("deleted the ManagedRancherProject of a removed resource project", zap.String("name", it.GetName()))
	}
	return nil
}

// warnUnmapped warns, once per role, about granted roles the map does not bind: those members
// get no access on the provider's side.
func (b *Backend) warnUnmapped(log *zap.Logger, key string, grants []backends.Grant, m map[string]string) {
	for _, role := range unmappedRoles(grants, m) {
		if _, done := b.warned.LoadOrStore(key+"/"+role, true); !done {
			log.Warn("a granted role is not in the agent's "+key+" and is not bound in Rancher; add it to bind it",
				zap.String("role", role))
		}
	}
}

// Ping lists the namespace's custom resources (one): the API server answers, the CRD is
// installed and the agent may read them.
func (b *Backend) Ping(ctx context.Context) error {
	if _, err := b.kube.list(ctx, "", 1); err != nil {
		return b.explain(err)
	}
	return nil
}

func (b *Backend) explain(err error) error {
	switch {
	case errors.Is(err, failure.ErrNotFound):
		return fmt.Errorf("the ManagedRancherProject CRD (managedrancherprojects.waldur.io/v1alpha1) is not installed: %w", err)
	case isStatus(err, http.StatusForbidden) || isStatus(err, http.StatusUnauthorized):
		return fmt.Errorf("not allowed to read ManagedRancherProjects in namespace %s (see configs/rancher-kc-crd/rbac.yaml): %w", b.cfg.namespace, err)
	}
	return err
}

// Probes implements backends.Diagnoser: the API server and the custom resources the agent can
// see.
func (b *Backend) Probes() []backends.Probe {
	return []backends.Probe{{Upstream: "kubernetes", Run: b.diagnose}}
}

func (b *Backend) diagnose(ctx context.Context) []backends.Check {
	var checks []backends.Check
	v, err := b.kube.g.ServerVersion(ctx)
	if err != nil {
		return append(checks, backends.Check{Name: "kubernetes API", Detail: err.Error()})
	}
	checks = append(checks, backends.Check{Name: "kubernetes API", OK: true, Detail: v.GitVersion})
	items, err := b.kube.list(ctx, labelResource, 500)
	if err != nil {
		return append(checks, backends.Check{Name: "ManagedRancherProjects", Detail: b.explain(err).Error()})
	}
	return append(checks, backends.Check{Name: "ManagedRancherProjects", OK: true,
		Detail: fmt.Sprintf("%d managed by Waldur in namespace %s", len(items), b.cfg.namespace)})
}

// statusMessage is the API server's message of a status error.
func statusMessage(err error) string {
	var se *failure.StatusError
	if errors.As(err, &se) && se.Body != "" {
		return strings.TrimSpace(se.Body)
	}
	return err.Error()
}
