package rancher

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// Reconcile implements backends.Reconciler. On every membership pass it checks, against one
// cluster-wide listing, that the resource's namespace (labels, project assignment), quota
// (amounts = the Waldur limits, or the temporary ones of a paused or downscaled resource) and,
// with Keycloak, child group, project binding and no stale group bindings exist, and re-creates
// or corrects whatever was deleted or changed. While Keycloak does not answer, the group check
// waits; everything in Rancher goes on. A vanished project is a permanent error: its id cannot
// be re-created.
func (b *Backend) Reconcile(ctx context.Context, res backends.Resource) error {
	if b.foreignCluster(res.BackendID) != "" {
		_, err := b.project(ctx, res.BackendID) // the error names both clusters
		return err
	}
	inv, err := b.inventory(ctx)
	if err != nil {
		return err
	}
	p, group, err := b.reconcileProject(ctx, inv, res)
	if err != nil {
		return err
	}
	log := b.logger(ctx).With(zap.String("project", p.ID))
	var nsSeen *corev1.Namespace
	for i := range inv.namespaces[p.ID] {
		if inv.namespaces[p.ID][i].Name == p.Name {
			nsSeen = &inv.namespaces[p.ID][i]
		}
	}
	changed := false
	var quotaSeen *corev1.ResourceQuota
	mode := modeKeep
	if nsSeen == nil || nsSeen.DeletionTimestamp != nil || needsRepair(nsSeen, b.namespaceFor(res, p)) {
		if changed, err = b.ensureNamespace(ctx, res, p, false); err != nil {
			return fmt.Errorf("namespace %s: %w", p.Name, err)
		}
	} else if quotaSeen = inv.quotas[p.Name]; quotaSeen == nil { // only trustworthy when the namespace was there all along
		mode = modeNormal // the listing shows no quota: nothing was paused or downscaled
	}
	_, qChanged, err := b.ensureQuota(ctx, p.Name, res.Limits, quotaSeen, false, mode)
	if err != nil {
		return fmt.Errorf("resource quota in %s: %w", p.Name, err)
	}
	changed = changed || qChanged
	if b.kc != nil {
		aChanged, err := b.reconcileAccess(ctx, res, p.ID, group, inv.bindings[p.ID])
		if err != nil {
			return err
		}
		changed = changed || aChanged
	}
	if changed {
		log.Info("drift repaired")
		b.invalidate()
	}
	return nil
}

// reconcileAccess checks the child group (unless Keycloak is down), the binding and the stale
// group bindings of a project.
func (b *Backend) reconcileAccess(ctx context.Context, res backends.Resource, projectID, group string, bindings []Binding) (bool, error) {
	gChanged := false
	if err := b.accessReady(); err != nil {
		b.logger(ctx).Debug("keycloak not ready; the group check waits", zap.String("group", group))
	} else if gChanged, err = b.ensureGroup(ctx, res, group); err != nil {
		return false, fmt.Errorf("keycloak group %s: %w", group, err)
	}
	bChanged, err := b.ensureBinding(ctx, projectID, group, bindings, true)
	if err != nil {
		return false, fmt.Errorf("project role binding: %w", err)
	}
	pChanged, err := b.pruneBindings(ctx, projectID, group, bindings)
	if err != nil {
		return false, fmt.Errorf("stale project role bindings: %w", err)
	}
	return gChanged || bChanged || pChanged, nil
}

// reconcileProject finds the resource's project (confirming an absence with a direct read),
// records the resource's ownership on projects the incumbent created and, with Keycloak, the
// child group on projects that carry none yet.
func (b *Backend) reconcileProject(ctx context.Context, inv *inventory, res backends.Resource) (Project, string, error) {
	p, ok := inv.projects[res.BackendID]
	if !ok {
		var err error
		if p, err = b.project(ctx, res.BackendID); err != nil {
			if errors.Is(err, failure.ErrNotFound) {
				return Project{}, "", &failure.Error{Msg: fmt.Sprintf("rancher project %s no longer exists (deleted outside Waldur); "+
					"terminate this resource and order a new one", res.BackendID), Err: err}
			}
			return Project{}, "", err
		}
	}
	if p.Annotations[annManaged] != "true" {
		return Project{}, "", failure.Errorf("rancher project %s (%s) is not managed by Waldur (no waldur/managed annotation)", p.ID, p.Name)
	}
	if uid := p.Annotations[annResourceUUID]; uid != "" && uid != res.UUID {
		return Project{}, "", failure.Errorf("rancher project %s is recorded as belonging to resource %s, not %s", p.ID, uid, res.UUID)
	}
	legacy := func() ([]Binding, error) {
		return inv.byPrincipal[principal(childGroupName(res.ProjectSlug, b.cfg.role))], nil
	}
	return b.recordGroup(ctx, res, p, legacy)
}

// Limits implements backends.LimitsReader: the quota's amounts (backend units) plus, for
// components the quota does not hold, the amounts Waldur has.
func (b *Backend) Limits(ctx context.Context, res backends.Resource) (backends.Quantities, error) {
	inv, err := b.inventory(ctx)
	if err != nil {
		return nil, err
	}
	p, ok := inv.projects[res.BackendID]
	if !ok {
		info, err := b.Lookup(ctx, res)
		return info.Limits, err
	}
	q := inv.quotas[p.Name]
	if q == nil || temporary(q) {
		return b.enforced(res.Limits, nil), nil // a paused or downscaled quota is not the resource's limits
	}
	return b.enforced(res.Limits, q.Spec.Hard), nil
}

// Metadata implements backends.MetadataReader.
func (b *Backend) Metadata(ctx context.Context, res backends.Resource) (map[string]any, error) {
	inv, err := b.inventory(ctx)
	if err != nil {
		return nil, err
	}
	p, ok := inv.projects[res.BackendID]
	if !ok {
		if p, err = b.project(ctx, res.BackendID); err != nil {
			return nil, err
		}
	}
	var names []string
	for _, ns := range inv.namespaces[p.ID] {
		names = append(names, ns.Name)
	}
	return b.metadata(res, p, names, inv.quotas[p.Name]), nil
}

// metadata is what the resource's backend_metadata shows. It must be stable between passes
// (it is only sent to Waldur when it changes).
func (b *Backend) metadata(res backends.Resource, p Project, namespaces []string, q *corev1.ResourceQuota) map[string]any {
	quota := map[string]string{}
	if q != nil {
		for k, v := range q.Spec.Hard {
			quota[string(k)] = v.String()
		}
	}
	md := map[string]any{
		"rancher_cluster_id":   b.cfg.clusterID,
		"rancher_project_id":   p.ID,
		"rancher_project_name": p.Name,
		"namespaces":           append([]string{}, namespaces...),
		"quota":                quota,
	}
	if temporary(q) {
		md["quota_status"] = q.Annotations[annStatus]
	}
	if group := b.knownGroup(p); b.kc != nil && group != "" {
		md["keycloak_group"] = group
		md["rancher_role"] = b.cfg.role
		if missing := b.missingUsers(group); len(missing) > 0 {
			md["keycloak_missing_users"] = missing
		}
	}
	return md
}
