package rancher

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// Create implements backends.Provisioner: find-or-create the project, its namespace and quota,
// and with Keycloak the groups, the binding and the initial members. Every step finds what an
// earlier, interrupted attempt made, so a retry completes the work. backend_id is the Rancher
// project id (c-…:p-…).
func (b *Backend) Create(ctx context.Context, req backends.CreateRequest) (backends.Info, error) {
	res := req.Resource
	if err := checkSlugs(res); err != nil {
		return backends.Info{}, err
	}
	name := b.nameFor(req)
	if err := checkNamespaceName(name); err != nil {
		return backends.Info{}, err
	}
	if _, err := b.cfg.quotaKeys.hard(res.Limits); err != nil {
		return backends.Info{}, err
	}
	defer b.invalidate()
	p, err := b.recordedOrNamedProject(ctx, res, name)
	if err != nil {
		return backends.Info{}, err
	}
	made := backends.Info{BackendID: p.ID} // returned with any later error, so the agent records it
	log := b.log.With(zap.String("project", p.ID), zap.String("name", p.Name))
	if _, err := b.ensureNamespace(ctx, res, p, true); err != nil {
		return made, fmt.Errorf("namespace of %s: %w", p.ID, err)
	}
	hard, _, err := b.ensureQuota(ctx, p.Name, res.Limits, nil, true)
	if err != nil {
		return made, fmt.Errorf("resource quota of %s: %w", p.ID, err)
	}
	if b.kc != nil {
		if err := b.grantAccess(ctx, res, p, req.Members); err != nil {
			return made, err
		}
	}
	log.Info("rancher resource ready")
	return backends.Info{BackendID: p.ID, Limits: b.enforced(res.Limits, hard), Metadata: b.metadata(res, p, []string{p.Name}, hard)}, nil
}

// recordedOrNamedProject finds the project a resource already has (its recorded backend id,
// when it still exists and is ours), else finds or creates it by name.
func (b *Backend) recordedOrNamedProject(ctx context.Context, res backends.Resource, name string) (Project, error) {
	if res.BackendID != "" {
		p, err := b.project(ctx, res.BackendID)
		switch {
		case err == nil && owner(p, res) == ownedByUs:
			return p, nil
		case err != nil && !errors.Is(err, failure.ErrNotFound):
			return Project{}, err
		}
	}
	return b.ensureProject(ctx, res, name)
}

// grantAccess ensures the Keycloak groups, the project binding and the initial members.
func (b *Backend) grantAccess(ctx context.Context, res backends.Resource, p Project, members []backends.Member) error {
	// EnsureGroup directly: a new resource's group is often new too (a lookup first would cost
	// one more request), and the keycloak client caches what it finds.
	if _, err := b.kc.EnsureGroup(ctx, b.cfg.parentGroup, parentGroupDescription(b.cfg.clusterID),
		b.childGroup(res), childGroupDescription(res.ProjectSlug, b.cfg.role)); err != nil {
		return fmt.Errorf("keycloak group %s: %w", b.childGroup(res), err)
	}
	if _, err := b.ensureBinding(ctx, p.ID, b.childGroup(res), nil); err != nil {
		return fmt.Errorf("project role binding of %s: %w", p.ID, err)
	}
	return b.addMembers(ctx, res, members)
}

// nameFor is the project name for a create request: project_prefix + the proposed name (a
// project id, which older agents proposed when re-creating, is never a name).
func (b *Backend) nameFor(req backends.CreateRequest) string {
	proposed := req.Name
	if proposed == "" || strings.Contains(proposed, ":") {
		proposed = baseName(req.Resource)
	}
	return projectName(b.cfg.prefix, strings.ToLower(proposed))
}

func checkSlugs(res backends.Resource) error {
	var missing []string
	if res.CustomerSlug == "" {
		missing = append(missing, "customer slug")
	}
	if res.ProjectSlug == "" {
		missing = append(missing, "project slug")
	}
	if len(missing) > 0 {
		return failure.Errorf("resource %s has unset or missing slug fields (%s)", res.UUID, strings.Join(missing, ", "))
	}
	return nil
}

// Lookup implements backends.Provisioner.
func (b *Backend) Lookup(ctx context.Context, res backends.Resource) (backends.Info, error) {
	p, err := b.project(ctx, res.BackendID)
	if err != nil {
		return backends.Info{}, err
	}
	q, err := b.kube.quota(ctx, p.Name)
	var hard corev1.ResourceList
	switch {
	case err == nil:
		hard = q.Spec.Hard
	case !errors.Is(err, failure.ErrNotFound):
		return backends.Info{}, err
	}
	return backends.Info{BackendID: p.ID, Limits: b.enforced(res.Limits, hard)}, nil
}

// project reads a project by backend id; ids that are not this cluster's projects and
// projects that do not exist give ErrNotFound.
func (b *Backend) project(ctx context.Context, id string) (Project, error) {
	if !b.isProjectID(id) {
		return Project{}, fmt.Errorf("%q is not a project of rancher cluster %s: %w", id, b.cfg.clusterID, failure.ErrNotFound)
	}
	p, err := b.v3.Project(ctx, id)
	if err != nil {
		return Project{}, err
	}
	if p.Annotations[annManaged] != "true" {
		return Project{}, failure.Errorf("rancher project %s (%s) is not managed by Waldur (no waldur/managed annotation)", p.ID, p.Name)
	}
	return p, nil
}

// SetLimits implements backends.Provisioner: the namespace quota gets the new limits (backend
// units; unit_factor is applied by the core on every path, unlike the incumbent's update).
func (b *Backend) SetLimits(ctx context.Context, res backends.Resource, limits backends.Quantities) error {
	if _, err := b.cfg.quotaKeys.hard(limits); err != nil {
		return err
	}
	p, err := b.project(ctx, res.BackendID)
	if err != nil {
		return err
	}
	defer b.invalidate()
	if _, err := b.ensureNamespace(ctx, res, p, false); err != nil {
		return err
	}
	_, _, err = b.ensureQuota(ctx, p.Name, limits, nil, false)
	return err
}

// enforced is what Waldur should hold as limits: the quota's amounts for quota components and
// the requested amounts for the others (which the backend does not enforce).
func (b *Backend) enforced(requested backends.Quantities, hard corev1.ResourceList) backends.Quantities {
	out := requested.Clone()
	if out == nil {
		out = backends.Quantities{}
	}
	for k, v := range b.cfg.quotaKeys.read(hard) {
		out[k] = v
	}
	return out
}

// Delete implements backends.Provisioner: the binding, the project (Rancher deletes its
// namespaces and their quotas; leftovers are deleted too) and, when no other project is bound
// to it, the Keycloak child group and then an empty parent group. Missing objects are fine.
func (b *Backend) Delete(ctx context.Context, res backends.Resource) error {
	defer b.invalidate()
	p, err := b.project(ctx, res.BackendID)
	switch {
	case errors.Is(err, failure.ErrNotFound):
		p = Project{}
	case err != nil:
		return err
	case owner(p, res) == ownedByAnother && p.Annotations[annResourceUUID] != "":
		return failure.Errorf("rancher project %s belongs to resource %s, not to %s; not deleted", p.ID, p.Annotations[annResourceUUID], res.UUID)
	}
	if b.kc != nil && b.isProjectID(res.BackendID) {
		if err := b.deleteBindings(ctx, res.BackendID, b.childGroup(res)); err != nil {
			return fmt.Errorf("project role bindings: %w", err)
		}
	}
	if p.ID != "" {
		if err := b.v3.DeleteProject(ctx, p); err != nil && !errors.Is(err, failure.ErrNotFound) {
			return err
		}
		b.log.Info("rancher project deleted", zap.String("project", p.ID), zap.String("name", p.Name))
	}
	if b.isProjectID(res.BackendID) {
		if err := b.deleteLeftoverNamespaces(ctx, res.BackendID); err != nil {
			return err
		}
	}
	if b.kc != nil {
		return b.releaseGroup(ctx, res, res.BackendID)
	}
	return nil
}

// deleteLeftoverNamespaces deletes namespaces still assigned to a deleted project.
func (b *Backend) deleteLeftoverNamespaces(ctx context.Context, projectID string) error {
	byProject, err := b.projectNamespaces(ctx)
	if err != nil {
		return err
	}
	for _, ns := range byProject[projectID] {
		if ns.DeletionTimestamp != nil || ns.Annotations[annManaged] != "true" {
			continue
		}
		if err := b.kube.deleteNamespace(ctx, ns.Name); err != nil {
			return err
		}
		b.log.Info("namespace of deleted project deleted", zap.String("namespace", ns.Name))
	}
	return nil
}
