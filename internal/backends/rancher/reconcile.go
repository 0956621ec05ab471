package rancher

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// Reconcile implements backends.Reconciler. On every membership pass it checks, against one
// cluster-wide listing, that the resource's namespace (labels, project assignment), quota
// (amounts = the Waldur limits) and, with Keycloak, child group and project binding exist, and
// re-creates or corrects whatever was deleted or changed. A vanished project is a permanent
// error: its id cannot be re-created.
func (b *Backend) Reconcile(ctx context.Context, res backends.Resource) error {
	inv, err := b.inventory(ctx)
	if err != nil {
		return err
	}
	p, err := b.reconcileProject(ctx, inv, res)
	if err != nil {
		return err
	}
	log := b.log.With(zap.String("project", p.ID))
	var nsSeen *corev1.Namespace
	for i := range inv.namespaces[p.ID] {
		if inv.namespaces[p.ID][i].Name == p.Name {
			nsSeen = &inv.namespaces[p.ID][i]
		}
	}
	changed := false
	var quotaSeen *corev1.ResourceQuota
	if nsSeen == nil || nsSeen.DeletionTimestamp != nil || needsRepair(nsSeen, b.namespaceFor(res, p)) {
		if changed, err = b.ensureNamespace(ctx, res, p, false); err != nil {
			return fmt.Errorf("namespace %s: %w", p.Name, err)
		}
	} else {
		quotaSeen = inv.quotas[p.Name] // only trustworthy when the namespace was there all along
	}
	_, qChanged, err := b.ensureQuota(ctx, p.Name, res.Limits, quotaSeen, false)
	if err != nil {
		return fmt.Errorf("resource quota in %s: %w", p.Name, err)
	}
	changed = changed || qChanged
	if b.kc != nil {
		gChanged, err := b.ensureGroup(ctx, res)
		if err != nil {
			return fmt.Errorf("keycloak group %s: %w", b.childGroup(res), err)
		}
		bChanged, err := b.ensureBinding(ctx, p.ID, b.childGroup(res), inv.bindings[p.ID])
		if err != nil {
			return fmt.Errorf("project role binding: %w", err)
		}
		changed = changed || gChanged || bChanged
	}
	if changed {
		log.Info("drift repaired")
		b.invalidate()
	}
	return nil
}

// reconcileProject finds the resource's project (confirming an absence with a direct read) and
// records the resource's ownership on projects the incumbent created.
func (b *Backend) reconcileProject(ctx context.Context, inv *inventory, res backends.Resource) (Project, error) {
	p, ok := inv.projects[res.BackendID]
	if !ok {
		var err error
		if p, err = b.project(ctx, res.BackendID); err != nil {
			if errors.Is(err, failure.ErrNotFound) {
				return Project{}, &failure.Error{Msg: fmt.Sprintf("rancher project %s no longer exists (deleted outside Waldur); "+
					"terminate this resource and order a new one", res.BackendID), Err: err}
			}
			return Project{}, err
		}
	}
	if p.Annotations[annManaged] != "true" {
		return Project{}, failure.Errorf("rancher project %s (%s) is not managed by Waldur (no waldur/managed annotation)", p.ID, p.Name)
	}
	switch uid := p.Annotations[annResourceUUID]; {
	case uid == res.UUID:
		return p, nil
	case uid != "":
		return Project{}, failure.Errorf("rancher project %s is recorded as belonging to resource %s, not %s", p.ID, uid, res.UUID)
	}
	ann := maps.Clone(p.Annotations)
	ann[annResourceUUID] = res.UUID
	b.log.Info("recording resource ownership on a project made by the incumbent", zap.String("project", p.ID))
	out, err := b.v3.SetProjectAnnotations(ctx, p, ann)
	if err == nil {
		b.invalidate()
	}
	return out, err
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
	var hard corev1.ResourceList
	if q := inv.quotas[p.Name]; q != nil {
		hard = q.Spec.Hard
	}
	return b.enforced(res.Limits, hard), nil
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
	var hard corev1.ResourceList
	if q := inv.quotas[p.Name]; q != nil {
		hard = q.Spec.Hard
	}
	return b.metadata(res, p, names, hard), nil
}

// metadata is what the resource's backend_metadata shows. It must be stable between passes
// (it is only sent to Waldur when it changes).
func (b *Backend) metadata(res backends.Resource, p Project, namespaces []string, hard corev1.ResourceList) map[string]any {
	quota := map[string]string{}
	for k, q := range hard {
		quota[string(k)] = q.String()
	}
	md := map[string]any{
		"rancher_cluster_id":   b.cfg.clusterID,
		"rancher_project_id":   p.ID,
		"rancher_project_name": p.Name,
		"namespaces":           append([]string{}, namespaces...),
		"quota":                quota,
	}
	if b.kc != nil {
		md["keycloak_group"] = b.childGroup(res)
		md["rancher_role"] = b.cfg.role
		if missing := b.missingUsers(res); len(missing) > 0 {
			md["keycloak_missing_users"] = missing
		}
	}
	return md
}
