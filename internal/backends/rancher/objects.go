package rancher

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/backends"
	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
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

func (b *Backend) projectAnnotations(res backends.Resource) map[string]string {
	slug := res.ProjectSlug
	if slug == "" {
		slug = "unknown"
	}
	ann := map[string]string{annOrganization: res.CustomerSlug, annManaged: "true", annProjectSlug: slug, annResourceUUID: res.UUID}
	if b.kc != nil {
		ann[annGroup] = scopedGroupName(b.cfg.clusterID, res.ProjectSlug, b.cfg.role)
	}
	return ann
}

// ensureProject finds the cluster's project called name, adopting it when it is ours (or the
// incumbent's for this Waldur project), or creates it; fresh reports a project made by this
// call. The cluster's projects are listed once per pass for all Creates (a project found in
// that listing is read again before it is adopted); a project of that name owned by someone
// else gives ErrDuplicate before anything is created. A failed create is retried only after
// looking again, so a lost response never makes two projects.
func (b *Backend) ensureProject(ctx context.Context, res backends.Resource, name string) (p Project, fresh bool, err error) {
	for attempt := 0; ; attempt++ {
		var found []Project
		cached := false
		if attempt == 0 {
			found, cached, err = b.names.lookup(ctx, b, name)
		} else {
			found, err = b.v3.Projects(ctx, b.cfg.clusterID, name)
		}
		if err != nil {
			return Project{}, false, err
		}
		if p, ok, err := b.pick(ctx, found, res, name, cached); ok || err != nil {
			return p, false, err
		}
		p, err := b.v3.CreateProject(ctx, rancherapi.NewProject{ClusterID: b.cfg.clusterID, Name: name,
			Description: description(res), Annotations: b.projectAnnotations(res)})
		if err == nil {
			b.logger(ctx).Info("rancher project created", zap.String("project", p.ID), zap.String("name", name))
			b.names.add(p)
			return p, true, nil
		}
		if !failure.IsTransient(err) || attempt >= 2 {
			return Project{}, false, err
		}
		b.logger(ctx).Warn("rancher project create failed; looking for it before trying again", zap.String("name", name), zap.Error(err))
	}
}

// pick chooses among projects called name: ours wins, a foreign one means ErrDuplicate. A
// project taken from the per-pass listing (cached) is read again first: it may be gone.
func (b *Backend) pick(ctx context.Context, found []Project, res backends.Resource, name string, cached bool) (Project, bool, error) {
	var foreign *Project
	for _, p := range found {
		if p.Name != name {
			continue
		}
		o := owner(p, res)
		if cached && o != ownedByAnother {
			cur, err := b.v3.Project(ctx, p.ID)
			if errors.Is(err, failure.ErrNotFound) {
				b.names.remove(p.ID)
				continue
			}
			if err != nil {
				return Project{}, false, err
			}
			p, o = cur, owner(cur, res)
		}
		switch o {
		case ownedByUs:
			return p, true, nil
		case ownedLegacy:
			b.logger(ctx).Info("adopting the incumbent's rancher project", zap.String("project", p.ID), zap.String("name", name))
			p, _, err := b.recordGroup(ctx, res, p, func() ([]Binding, error) { return b.legacyBindings(ctx, res) })
			return p, err == nil, err
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

// errForeignNamespace marks a namespace of the project's name that belongs to something else.
var errForeignNamespace = errors.New("the namespace belongs to something else")

// namespaceFor is the namespace a project should have. Its waldur/managed-labels annotation
// lists the namespace_labels keys, so that a key dropped from the configuration is removed.
func (b *Backend) namespaceFor(res backends.Resource, p Project) *corev1.Namespace {
	labels := map[string]string{psaEnforce: "restricted", psaEnforceVersion: "latest"}
	maps.Copy(labels, b.cfg.labels)
	labels[projectIDKey] = projectPart(p.ID)
	ann := map[string]string{projectIDKey: p.ID, annManaged: "true", annLabels: strings.Join(slices.Sorted(maps.Keys(b.cfg.labels)), ",")}
	if uid := res.UUID; uid != "" {
		ann[annResourceUUID] = uid
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Labels: labels, Annotations: ann}}
}

// ensureNamespace finds or creates the project's namespace (named like the project) and puts
// back labels and the project assignment when they drifted. createFirst tries the create before
// reading (one request when the namespace is new). It reports whether it changed anything; a
// namespace of that name that belongs to something else is an error wrapping errForeignNamespace.
func (b *Backend) ensureNamespace(ctx context.Context, res backends.Resource, p Project, createFirst bool) (bool, error) {
	want := b.namespaceFor(res, p)
	var ns *corev1.Namespace
	var err error
	if !createFirst {
		ns, err = b.kube.namespace(ctx, want.Name)
	}
	if createFirst || errors.Is(err, failure.ErrNotFound) {
		if _, err = b.kube.createNamespace(ctx, want); err == nil {
			b.logger(ctx).Info("namespace created", zap.String("namespace", want.Name), zap.String("project", p.ID))
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
	return b.kube.updateNamespace(ctx, ns, func(ns *corev1.Namespace) (*corev1.Namespace, error) {
		return b.repaired(ctx, ns, want, res, p)
	})
}

// repaired is ns with the labels and annotations of want put back, or nil when none drifted. A
// namespace being deleted is a transient error; one that belongs to another project, one
// wrapping errForeignNamespace.
func (b *Backend) repaired(ctx context.Context, ns, want *corev1.Namespace, res backends.Resource, p Project) (*corev1.Namespace, error) {
	if ns.DeletionTimestamp != nil {
		return nil, failure.Transient(fmt.Errorf("namespace %q is being deleted; it is re-created once it is gone", ns.Name))
	}
	ours := res.UUID != "" && ns.Annotations[annResourceUUID] == res.UUID
	if got := b.namespaceProject(ns); got != p.ID && !ours {
		return nil, &failure.Error{Msg: fmt.Sprintf("namespace %q already exists and belongs to %q, not to rancher project %s",
			ns.Name, got, p.ID), Err: errForeignNamespace}
	}
	if !needsRepair(ns, want) {
		return nil, nil
	}
	fixed := ns.DeepCopy()
	if fixed.Labels == nil {
		fixed.Labels = map[string]string{}
	}
	if fixed.Annotations == nil {
		fixed.Annotations = map[string]string{}
	}
	for _, k := range dropped(ns, want) {
		delete(fixed.Labels, k)
		b.logger(ctx).Info("namespace label no longer configured; removed", zap.String("namespace", ns.Name), zap.String("label", k))
	}
	maps.Copy(fixed.Labels, want.Labels)
	maps.Copy(fixed.Annotations, want.Annotations)
	b.logger(ctx).Info("namespace labels or project assignment drifted; repairing", zap.String("namespace", ns.Name))
	return fixed, nil
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
	return len(dropped(have, want)) > 0
}

// dropped lists labels the agent set earlier (recorded in waldur/managed-labels) that are no
// longer configured and still on the namespace. A namespace without the annotation (made by
// the incumbent or an older agent) has none: which of its labels were configured is unknown.
func dropped(have, want *corev1.Namespace) []string {
	var out []string
	for _, k := range strings.Split(have.Annotations[annLabels], ",") {
		if _, still := want.Labels[k]; k != "" && !still {
			if _, on := have.Labels[k]; on {
				out = append(out, k)
			}
		}
	}
	return out
}
