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
// earlier, interrupted attempt made, so a retry completes the work; objects a new project cannot
// have yet are created without looking first (four Rancher requests for a new resource, plus the
// cluster's project listing once per pass). backend_id is the Rancher project id (c-…:p-…).
// While Keycloak does not answer, the Rancher part is done and the call fails with a transient
// error wrapping backends.ErrAccessNotReady; the order is completed once Keycloak is back.
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
	p, fresh, err := b.recordedOrNamedProject(ctx, res, name)
	if err != nil {
		return backends.Info{}, err
	}
	made := backends.Info{BackendID: p.ID} // returned with any later error, so the agent records it
	log := b.logger(ctx).With(zap.String("project", p.ID), zap.String("name", p.Name))
	if _, err := b.ensureNamespace(ctx, res, p, true); err != nil {
		if fresh && errors.Is(err, errForeignNamespace) {
			return backends.Info{}, b.rollback(ctx, p, err)
		}
		return made, fmt.Errorf("namespace of %s: %w", p.ID, err)
	}
	hard, _, err := b.ensureQuota(ctx, p.Name, res.Limits, nil, true, modeNormal)
	if err != nil {
		return made, fmt.Errorf("resource quota of %s: %w", p.ID, err)
	}
	if b.kc != nil {
		if err := b.grantAccess(ctx, res, p, fresh, req.Members); err != nil {
			return made, err
		}
	}
	log.Info("rancher resource ready")
	q := &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	return backends.Info{BackendID: p.ID, Limits: b.enforced(res.Limits, hard), Metadata: b.metadata(res, p, []string{p.Name}, q)}, nil
}

// rollback deletes a project this call made for a name whose namespace turned out to belong to
// something else, and reports the name as taken (the core tries the next one).
func (b *Backend) rollback(ctx context.Context, p Project, cause error) error {
	if err := b.v3.DeleteProject(ctx, p.ID); err != nil && !errors.Is(err, failure.ErrNotFound) {
		return fmt.Errorf("%w; deleting the project made for it failed: %w", cause, err)
	}
	b.names.remove(p.ID)
	b.logger(ctx).Info("project name taken by a foreign namespace; the project made for it was deleted", zap.String("project", p.ID), zap.String("name", p.Name))
	return fmt.Errorf("%w: %w", cause, failure.ErrDuplicate)
}

// recordedOrNamedProject finds the project a resource already has (its recorded backend id,
// when it still exists and is ours), else finds or creates it by name; fresh reports a project
// made by this call.
func (b *Backend) recordedOrNamedProject(ctx context.Context, res backends.Resource, name string) (Project, bool, error) {
	if res.BackendID != "" {
		p, err := b.project(ctx, res.BackendID)
		switch {
		case err == nil && owner(p, res) == ownedByUs:
			return p, false, nil
		case err != nil && !errors.Is(err, failure.ErrNotFound):
			return Project{}, false, err
		}
	}
	return b.ensureProject(ctx, res, name)
}

// grantAccess ensures the Keycloak groups, the project binding and the initial members. The
// group is the one recorded on the project (new projects get the cluster-scoped name at
// creation); a cached group costs no Keycloak request and a new one a single create.
func (b *Backend) grantAccess(ctx context.Context, res backends.Resource, p Project, fresh bool, members []backends.Member) error {
	if err := b.accessReady(); err != nil {
		return err
	}
	p, group, err := b.recordGroup(ctx, res, p, func() ([]Binding, error) { return b.legacyBindings(ctx, res) })
	if err != nil {
		return fmt.Errorf("keycloak group of %s: %w", p.ID, err)
	}
	if _, err := b.ensureBinding(ctx, p.ID, group, nil, !fresh); err != nil {
		return fmt.Errorf("project role binding of %s: %w", p.ID, err)
	}
	if len(members) == 0 {
		_, _, err := b.ensureGroupID(ctx, res, group)
		return err
	}
	return b.addMembers(ctx, res, group, members)
}

// nameFor is the project name for a create request: project_prefix + the proposed name without
// the core's allocation_prefix, which the incumbent never put into project names (a project id,
// which older agents proposed when re-creating, is never a name).
func (b *Backend) nameFor(req backends.CreateRequest) string {
	proposed := strings.ToLower(req.Name)
	if proposed == "" || strings.Contains(proposed, ":") {
		proposed = baseName(req.Resource)
	}
	if b.cfg.allocPrefix != "" {
		proposed = strings.TrimPrefix(proposed, b.cfg.allocPrefix)
	}
	return projectName(b.cfg.prefix, proposed)
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
	case err == nil && !temporary(q):
		hard = q.Spec.Hard
	case err != nil && !errors.Is(err, failure.ErrNotFound):
		return backends.Info{}, err
	}
	return backends.Info{BackendID: p.ID, Limits: b.enforced(res.Limits, hard)}, nil
}

// project reads a project by backend id; ids that are no project ids and projects that do not
// exist give ErrNotFound. A project id of another cluster (cluster_id changed?) is a permanent
// error naming both clusters: treating it as gone would abandon the old project.
func (b *Backend) project(ctx context.Context, id string) (Project, error) {
	if other := b.foreignCluster(id); other != "" {
		return Project{}, failure.Errorf("rancher project %s belongs to cluster %s, but this offering manages cluster %s "+
			"(backend_settings.cluster_id); set cluster_id back to %s to manage it", id, other, b.cfg.clusterID, other)
	}
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
	_, _, err = b.ensureQuota(ctx, p.Name, limits, nil, false, modeKeep) // a paused resource stays paused
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

// Delete implements backends.Provisioner: the group bindings, the project (Rancher deletes its
// namespaces; leftovers are deleted too) and, when no other project is bound to it, the Keycloak
// child group and then an empty parent group. Missing objects are fine. A project of another
// cluster is refused while it exists. While Keycloak does not answer, the Rancher part is done and
// the group cleanup waits (a transient error keeps the order for the next cycle).
func (b *Backend) Delete(ctx context.Context, res backends.Resource) error {
	defer b.invalidate()
	if other := b.foreignCluster(res.BackendID); other != "" {
		return b.deleteForeign(ctx, res.BackendID, other)
	}
	p, err := b.project(ctx, res.BackendID)
	switch {
	case errors.Is(err, failure.ErrNotFound):
		p = Project{}
	case err != nil:
		return err
	case owner(p, res) == ownedByAnother && p.Annotations[annResourceUUID] != "":
		return failure.Errorf("rancher project %s belongs to resource %s, not to %s; not deleted", p.ID, p.Annotations[annResourceUUID], res.UUID)
	}
	groups := b.groupsOf(res, p)
	if b.kc != nil && b.isProjectID(res.BackendID) {
		if err := b.deleteBindings(ctx, res.BackendID); err != nil {
			return fmt.Errorf("project role bindings: %w", err)
		}
	}
	if p.ID != "" {
		if err := b.v3.DeleteProject(ctx, p.ID); err != nil && !errors.Is(err, failure.ErrNotFound) {
			return err
		}
		b.names.remove(p.ID)
		b.logger(ctx).Info("rancher project deleted", zap.String("project", p.ID), zap.String("name", p.Name))
	}
	if b.isProjectID(res.BackendID) {
		if err := b.deleteLeftoverNamespaces(ctx, res.BackendID); err != nil {
			return err
		}
	}
	if b.kc == nil {
		return nil
	}
	return b.releaseAccess(ctx, res, groups)
}

// releaseAccess is the Keycloak half of a Delete, once the project's bindings are deleted: each
// child group the project used goes when no other project is bound to it, then an empty parent.
func (b *Backend) releaseAccess(ctx context.Context, res backends.Resource, groups []string) error {
	if err := b.accessReady(); err != nil {
		return err
	}
	for _, g := range groups {
		if err := b.releaseGroup(ctx, g, res.BackendID); err != nil {
			return err
		}
	}
	b.forgetProject(res.BackendID)
	return b.releaseParent(ctx)
}

// groupsOf lists the child groups a deleted project may have used: the recorded one, else (the
// project is gone, or never recorded one) both the cluster-scoped and the incumbent's name —
// each is deleted only when no other project is bound to it.
func (b *Backend) groupsOf(res backends.Resource, p Project) []string {
	p.ID = res.BackendID // a vanished project: what this process remembers for its id
	if g := b.knownGroup(p); g != "" {
		return []string{g}
	}
	return []string{scopedGroupName(b.cfg.clusterID, res.ProjectSlug, b.cfg.role), childGroupName(res.ProjectSlug, b.cfg.role)}
}

// deleteForeign handles a Terminate of a project of another cluster: done when the project is
// gone, refused while it exists (the incumbent reported success and left it behind).
func (b *Backend) deleteForeign(ctx context.Context, id, other string) error {
	_, err := b.v3.Project(ctx, id)
	switch {
	case errors.Is(err, failure.ErrNotFound):
		b.logger(ctx).Info("the project of another cluster no longer exists; nothing to delete", zap.String("project", id))
		return nil
	case err != nil:
		return err
	}
	return failure.Errorf("rancher project %s belongs to cluster %s, but this offering manages cluster %s (backend_settings.cluster_id); "+
		"it was not deleted: set cluster_id back to %s to terminate it, or delete the project in Rancher and terminate again", id, other,
		b.cfg.clusterID, other)
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
		b.logger(ctx).Info("namespace of deleted project deleted", zap.String("namespace", ns.Name))
	}
	return nil
}
