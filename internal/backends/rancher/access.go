package rancher

import (
	"context"
	"fmt"
	"maps"
	"sync"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
	"github.com/waldur/site-agent/internal/failure"
)

// accessState remembers the outcome of the last Keycloak ping. While Keycloak does not answer,
// everything that needs it (groups, members, the access part of Create and Terminate) fails at
// once with an error wrapping backends.ErrAccessNotReady, instead of each call waiting through
// its retries; projects, namespaces, quotas, bindings and usage carry on.
type accessState struct {
	mu  sync.Mutex
	err error
}

func (a *accessState) set(err error) {
	a.mu.Lock()
	a.err = err
	a.mu.Unlock()
}

func (a *accessState) get() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// accessReady returns nil when access changes may be attempted.
func (b *Backend) accessReady() error {
	if err := b.acc.get(); err != nil {
		return failure.Transient(fmt.Errorf("keycloak did not answer the last check (%v); access changes wait for it: %w",
			err, backends.ErrAccessNotReady))
	}
	return nil
}

// groupOf returns the Keycloak child group of a resource's project: the one recorded on the
// project (remembered per process), else the one decideGroup picks. It reads the project when
// it is not known yet (one request; two for a project on which no group is recorded).
func (b *Backend) groupOf(ctx context.Context, res backends.Resource) (string, error) {
	b.kcMu.Lock()
	name := b.groups[res.BackendID]
	b.kcMu.Unlock()
	if name != "" {
		return name, nil
	}
	var p Project
	var ok bool
	if inv := b.fresh(); inv != nil {
		p, ok = inv.projects[res.BackendID]
	}
	if !ok {
		var err error
		if p, err = b.project(ctx, res.BackendID); err != nil {
			return "", err
		}
	}
	if g := b.recorded(p); g != "" {
		return g, nil
	}
	legacy, err := b.legacyBindings(ctx, res)
	if err != nil {
		return "", err
	}
	return b.decideGroup(ctx, res, p, legacy), nil
}

// recorded returns the group recorded on p ("" when none) and remembers it.
func (b *Backend) recorded(p Project) string {
	g := p.Annotations[annGroup]
	if g != "" {
		b.kcMu.Lock()
		b.groups[p.ID] = g
		b.kcMu.Unlock()
	}
	return g
}

// knownGroup is the group recorded on p, or remembered for it by this process ("" when none).
func (b *Backend) knownGroup(p Project) string {
	if g := b.recorded(p); g != "" {
		return g
	}
	b.kcMu.Lock()
	defer b.kcMu.Unlock()
	return b.groups[p.ID]
}

// forgetProject drops what the process remembers about a deleted project.
func (b *Backend) forgetProject(projectID string) {
	b.kcMu.Lock()
	delete(b.groups, projectID)
	b.kcMu.Unlock()
}

// legacyBindings lists the bindings, in every cluster, of the incumbent's group name for res.
func (b *Backend) legacyBindings(ctx context.Context, res backends.Resource) ([]Binding, error) {
	return b.v3.Bindings(ctx, rancherapi.BindingFilter{GroupPrincipalID: principal(childGroupName(res.ProjectSlug, b.cfg.role))})
}

// decideGroup picks the child group of a project on which none is recorded: the incumbent's
// name (project_<slug>_<role>) when the project is already bound to it and no project of another
// cluster is (so adopting it grants nothing new), else the cluster-scoped name. legacy are the
// bindings of the incumbent's principal in every cluster.
func (b *Backend) decideGroup(ctx context.Context, res backends.Resource, p Project, legacy []Binding) string {
	old := childGroupName(res.ProjectSlug, b.cfg.role)
	scoped := scopedGroupName(b.cfg.clusterID, res.ProjectSlug, b.cfg.role)
	bound, elsewhere := false, ""
	for _, bd := range legacy {
		switch {
		case bd.GroupPrincipalID != principal(old):
		case bd.ProjectID == p.ID:
			bound = true
		case !b.inCluster(bd.ProjectID):
			elsewhere = bd.ProjectID
		}
	}
	switch {
	case !bound:
		return scoped
	case elsewhere != "":
		b.logger(ctx).Warn("the incumbent's keycloak group is bound in another cluster too; moving this project to a cluster-scoped group",
			zap.String("project", p.ID), zap.String("group", old), zap.String("other_project", elsewhere), zap.String("new_group", scoped))
		return scoped
	}
	return old
}

// recordGroup makes sure the project carries the group annotation (and, for projects made by
// the incumbent, this resource's ownership), deciding the group when none is recorded. It
// writes at most one update.
func (b *Backend) recordGroup(ctx context.Context, res backends.Resource, p Project, legacy func() ([]Binding, error)) (Project, string, error) {
	group := p.Annotations[annGroup]
	ann := maps.Clone(p.Annotations)
	if ann == nil {
		ann = map[string]string{}
	}
	if group == "" && b.kc != nil {
		list, err := legacy()
		if err != nil {
			return p, "", err
		}
		group = b.decideGroup(ctx, res, p, list)
		ann[annGroup] = group
	}
	if ann[annResourceUUID] == "" {
		ann[annResourceUUID] = res.UUID
		b.logger(ctx).Info("recording resource ownership on a project made by the incumbent", zap.String("project", p.ID))
	}
	if maps.Equal(ann, p.Annotations) {
		b.recorded(p)
		return p, group, nil
	}
	out, err := b.v3.SetProjectAnnotations(ctx, p.ID, ann)
	if err != nil {
		return p, "", err
	}
	if group != "" {
		b.logger(ctx).Info("keycloak group recorded on the project", zap.String("project", p.ID), zap.String("group", group))
	}
	b.recorded(out)
	b.invalidate()
	return out, group, nil
}
