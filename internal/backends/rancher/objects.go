package rancher

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// ownership of an existing Rancher project relative to a resource.
type ownership int

const (
	ownedByUs      ownership = iota
	ownedLegacy              // the incumbent's project for this resource's Waldur project: adopt it
	ownedByAnother           // another resource's (or nobody's) project
)

func owner(p Project, res backends.Resource) ownership {
	switch uid := p.Annotations[annResourceUUID]; {
	case uid == res.UUID:
		return ownedByUs
	case uid != "":
		return ownedByAnother
	case p.Annotations[annManaged] == "true" && p.Annotations[annProjectSlug] == res.ProjectSlug &&
		p.Annotations[annOrganization] == res.CustomerSlug:
		return ownedLegacy
	}
	return ownedByAnother
}

func projectAnnotations(res backends.Resource) map[string]string {
	slug := res.ProjectSlug
	if slug == "" {
		slug = "unknown"
	}
	return map[string]string{annOrganization: res.CustomerSlug, annManaged: "true", annProjectSlug: slug, annResourceUUID: res.UUID}
}

// ensureProject finds the cluster's project called name, adopting it when it is ours (or the
// incumbent's for this Waldur project), or creates it. A project or namespace of that name
// owned by someone else gives ErrDuplicate, before anything is created. A failed create is
// retried only after looking again, so a lost response never makes two projects.
func (b *Backend) ensureProject(ctx context.Context, res backends.Resource, name string) (Project, error) {
	for attempt := 0; ; attempt++ {
		found, err := b.v3.Projects(ctx, b.cfg.clusterID, name)
		if err != nil {
			return Project{}, err
		}
		if p, ok, err := b.pick(ctx, found, res, name); ok || err != nil {
			return p, err
		}
		if err := b.namespaceFree(ctx, name, res); err != nil {
			return Project{}, err
		}
		p, err := b.v3.CreateProject(ctx, projectInput{ClusterID: b.cfg.clusterID, Name: name,
			Description: description(res), Annotations: projectAnnotations(res)})
		if err == nil {
			b.log.Info("rancher project created", zap.String("project", p.ID), zap.String("name", name))
			return p, nil
		}
		if !failure.IsTransient(err) || attempt >= 2 {
			return Project{}, err
		}
		b.log.Warn("rancher project create failed; looking for it before trying again", zap.String("name", name), zap.Error(err))
	}
}

// pick chooses among projects called name: ours wins, a foreign one means ErrDuplicate.
func (b *Backend) pick(ctx context.Context, found []Project, res backends.Resource, name string) (Project, bool, error) {
	var foreign *Project
	for _, p := range found {
		if p.Name != name {
			continue
		}
		switch owner(p, res) {
		case ownedByUs:
			return p, true, nil
		case ownedLegacy:
			b.log.Info("adopting the incumbent's rancher project", zap.String("project", p.ID), zap.String("name", name))
			ann := maps.Clone(p.Annotations)
			maps.Copy(ann, projectAnnotations(res))
			p, err := b.v3.SetProjectAnnotations(ctx, p, ann)
			return p, true, err
		default:
			foreign = &p
		}
	}
	if foreign != nil {
		return Project{}, false, fmt.Errorf("rancher project %q (%s) belongs to resource %q: %w",
			name, foreign.ID, foreign.Annotations[annResourceUUID], failure.ErrDuplicate)
	}
	return Project{}, false, nil
}

// namespaceFree checks that no namespace called name belongs to something else.
func (b *Backend) namespaceFree(ctx context.Context, name string, res backends.Resource) error {
	ns, err := b.kube.namespace(ctx, name)
	switch {
	case errors.Is(err, failure.ErrNotFound):
		return nil
	case err != nil:
		return err
	case res.UUID != "" && ns.Annotations[annResourceUUID] == res.UUID:
		return nil
	}
	return fmt.Errorf("namespace %q already exists and is not this resource's: %w", name, failure.ErrDuplicate)
}

// namespaceFor is the namespace a project should have.
func (b *Backend) namespaceFor(res backends.Resource, p Project) *corev1.Namespace {
	labels := map[string]string{psaEnforce: "restricted", psaEnforceVersion: "latest"}
	maps.Copy(labels, b.cfg.labels)
	labels[projectIDKey] = projectPart(p.ID)
	ann := map[string]string{projectIDKey: p.ID, annManaged: "true"}
	if uid := res.UUID; uid != "" {
		ann[annResourceUUID] = uid
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Labels: labels, Annotations: ann}}
}

// ensureNamespace finds or creates the project's namespace (named like the project) and puts
// back labels and the project assignment when they drifted. createFirst tries the create before
// reading (one request when the namespace is new). It reports whether it changed anything.
func (b *Backend) ensureNamespace(ctx context.Context, res backends.Resource, p Project, createFirst bool) (bool, error) {
	want := b.namespaceFor(res, p)
	var ns *corev1.Namespace
	var err error
	if !createFirst {
		ns, err = b.kube.namespace(ctx, want.Name)
	}
	if createFirst || errors.Is(err, failure.ErrNotFound) {
		if _, err = b.kube.createNamespace(ctx, want); err == nil {
			b.log.Info("namespace created", zap.String("namespace", want.Name), zap.String("project", p.ID))
			return true, nil
		}
		if !errors.Is(err, errExists) {
			return false, err
		}
		ns, err = b.kube.namespace(ctx, want.Name)
	}
	if err != nil {
		return false, err
	}
	if ns.DeletionTimestamp != nil {
		return false, failure.Transient(fmt.Errorf("namespace %q is being deleted; it is re-created once it is gone", ns.Name))
	}
	ours := res.UUID != "" && ns.Annotations[annResourceUUID] == res.UUID
	if got := b.namespaceProject(ns); got != p.ID && !ours {
		return false, failure.Errorf("namespace %q already exists and belongs to %q, not to rancher project %s", ns.Name, got, p.ID)
	}
	if !needsRepair(ns, want) {
		return false, nil
	}
	fixed := ns.DeepCopy()
	if fixed.Labels == nil {
		fixed.Labels = map[string]string{}
	}
	if fixed.Annotations == nil {
		fixed.Annotations = map[string]string{}
	}
	maps.Copy(fixed.Labels, want.Labels)
	maps.Copy(fixed.Annotations, want.Annotations)
	b.log.Info("namespace labels or project assignment drifted; repairing", zap.String("namespace", ns.Name))
	return true, b.kube.updateNamespace(ctx, fixed)
}

func needsRepair(have, want *corev1.Namespace) bool {
	for k, v := range want.Labels {
		if have.Labels[k] != v {
			return true
		}
	}
	for k, v := range want.Annotations {
		if have.Annotations[k] != v {
			return true
		}
	}
	return false
}

// ensureQuota creates or corrects custom-resource-quota in ns from limits (backend units). With
// no quota components among the limits it does nothing. have, when non-nil, is the quota as
// already read; createFirst tries the create before reading. It returns the spec.hard now in
// force and whether it changed it.
func (b *Backend) ensureQuota(ctx context.Context, ns string, limits backends.Quantities, have *corev1.ResourceQuota,
	createFirst bool) (corev1.ResourceList, bool, error) {
	hard, err := b.cfg.quotaKeys.hard(limits)
	if err != nil || len(hard) == 0 {
		return nil, false, err
	}
	if have == nil {
		var q *corev1.ResourceQuota
		if !createFirst {
			q, err = b.kube.quota(ctx, ns)
		}
		if createFirst || errors.Is(err, failure.ErrNotFound) {
			err = b.kube.createQuota(ctx, &corev1.ResourceQuota{
				ObjectMeta: metav1.ObjectMeta{Name: quotaName, Namespace: ns, Annotations: map[string]string{annManaged: "true"}},
				Spec:       corev1.ResourceQuotaSpec{Hard: hard}})
			if err == nil {
				b.log.Info("resource quota created", zap.String("namespace", ns))
				return hard, true, nil
			}
			if !errors.Is(err, errExists) {
				return nil, false, err
			}
			q, err = b.kube.quota(ctx, ns)
		}
		if err != nil {
			return nil, false, err
		}
		have = q
	}
	if sameHard(have.Spec.Hard, hard) {
		return hard, false, nil
	}
	if err := b.kube.setQuotaHard(ctx, have, hard); err != nil {
		return nil, false, err
	}
	b.log.Info("resource quota updated", zap.String("namespace", ns))
	return hard, true, nil
}
