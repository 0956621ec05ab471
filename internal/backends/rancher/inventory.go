package rancher

import (
	"context"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
)

// inventory is one cluster-wide read of everything Reconcile, Limits, Metadata and the status
// changes look at: four list requests (projects, bindings, namespaces, quotas) serve a whole
// membership pass, instead of several requests per resource. Anything it says is missing is
// confirmed with a direct read before it is re-created.
type inventory struct {
	at         time.Time
	projects   map[string]Project               // by project id
	namespaces map[string][]corev1.Namespace    // by project id (c-…:p-…), sorted by name
	quotas     map[string]*corev1.ResourceQuota // custom-resource-quota by namespace
	// bindings are the keycloakoidc_group:// bindings of every cluster the key can see (any
	// role), by project id; byPrincipal indexes the same by group principal, so a name bound in
	// another cluster is seen.
	bindings    map[string][]Binding
	byPrincipal map[string][]Binding
}

// inventory returns a listing no older than invTTL, fetching a new one if needed. Concurrent
// callers share one fetch.
func (b *Backend) inventory(ctx context.Context) (*inventory, error) {
	b.invMu.Lock()
	defer b.invMu.Unlock()
	if b.inv != nil && time.Since(b.inv.at) < b.invTTL {
		return b.inv, nil
	}
	inv := &inventory{at: time.Now(), projects: map[string]Project{}, namespaces: map[string][]corev1.Namespace{},
		quotas: map[string]*corev1.ResourceQuota{}, bindings: map[string][]Binding{}, byPrincipal: map[string][]Binding{}}
	projects, err := b.v3.Projects(ctx, b.cfg.clusterID, "")
	if err != nil {
		return nil, err
	}
	for _, p := range projects {
		inv.projects[p.ID] = p
	}
	nss, err := b.projectNamespaces(ctx)
	if err != nil {
		return nil, err
	}
	inv.namespaces = nss
	qs, err := b.kube.quotas(ctx, quotaName)
	if err != nil {
		return nil, err
	}
	for i := range qs {
		inv.quotas[qs[i].Namespace] = &qs[i]
	}
	if b.kc != nil {
		bs, err := b.v3.Bindings(ctx, rancherapi.BindingFilter{}) // v3 lists filter only by equality: one unfiltered listing
		if err != nil {
			return nil, err
		}
		for _, bd := range bs {
			if strings.HasPrefix(bd.GroupPrincipalID, principalScheme) {
				inv.bindings[bd.ProjectID] = append(inv.bindings[bd.ProjectID], bd)
				inv.byPrincipal[bd.GroupPrincipalID] = append(inv.byPrincipal[bd.GroupPrincipalID], bd)
			}
		}
	}
	b.inv = inv
	return inv, nil
}

// fresh returns the cached listing when it is still valid, without fetching one.
func (b *Backend) fresh() *inventory {
	b.invMu.Lock()
	defer b.invMu.Unlock()
	if b.inv != nil && time.Since(b.inv.at) < b.invTTL {
		return b.inv
	}
	return nil
}

// invalidate drops the cached listing after the backend changed something.
func (b *Backend) invalidate() {
	b.invMu.Lock()
	b.inv = nil
	b.invMu.Unlock()
}

// projectNamespaces groups the cluster's project namespaces by project id.
func (b *Backend) projectNamespaces(ctx context.Context) (map[string][]corev1.Namespace, error) {
	list, err := b.kube.projectNamespaces(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string][]corev1.Namespace{}
	for _, ns := range list {
		if id := b.namespaceProject(&ns); id != "" {
			out[id] = append(out[id], ns)
		}
	}
	for _, l := range out {
		sort.Slice(l, func(i, j int) bool { return l[i].Name < l[j].Name })
	}
	return out, nil
}

// namespaceProject returns the full project id a namespace is assigned to ("" if none).
func (b *Backend) namespaceProject(ns *corev1.Namespace) string {
	if id := ns.Annotations[projectIDKey]; id != "" {
		return id
	}
	if p := ns.Labels[projectIDKey]; p != "" {
		return b.cfg.clusterID + ":" + p
	}
	return ""
}

// isProjectID reports whether id has the form <cluster>:p-… for the configured cluster.
func (b *Backend) isProjectID(id string) bool {
	c, ok := projectCluster(id)
	return ok && c == b.cfg.clusterID
}

// foreignCluster returns the cluster of a project id that belongs to another cluster ("" when
// id is this cluster's or no project id at all).
func (b *Backend) foreignCluster(id string) string {
	if c, ok := projectCluster(id); ok && c != b.cfg.clusterID {
		return c
	}
	return ""
}

// inCluster reports whether a project id belongs to the configured cluster.
func (b *Backend) inCluster(projectID string) bool {
	return strings.HasPrefix(projectID, b.cfg.clusterID+":")
}

// projectCluster returns the cluster of an id of the form <cluster>:p-….
func projectCluster(id string) (string, bool) {
	c, p, ok := strings.Cut(id, ":")
	ok = ok && clusterIDPattern.MatchString(c) && strings.HasPrefix(p, "p-") && len(p) > 2 && !strings.ContainsAny(p, "/?#:")
	return c, ok
}

// projectPart is the part of a project id after the colon.
func projectPart(id string) string {
	_, p, _ := strings.Cut(id, ":")
	return p
}
