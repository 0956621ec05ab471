package rancher

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/backends"
	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
	"github.com/waldur/site-agent/internal/failure"
)

// Ping implements backends.Pinger: the cluster must exist under the configured id and not be
// unavailable (orders then wait instead of failing). Keycloak is checked too, but on its own:
// when only Keycloak fails, the error wraps backends.ErrAccessNotReady, so quotas, usage and
// the Rancher part of orders go on while access changes wait (and fail fast) until it answers.
func (b *Backend) Ping(ctx context.Context) error {
	c, err := b.v3.Cluster(ctx, b.cfg.clusterID)
	if err != nil {
		return fmt.Errorf("rancher cluster %s: %w", b.cfg.clusterID, err)
	}
	if c.ID != b.cfg.clusterID {
		return failure.Errorf("rancher answered cluster %q for id %q", c.ID, b.cfg.clusterID)
	}
	if c.State == "unavailable" {
		return fmt.Errorf("rancher cluster %s is unavailable: %w", c.ID, failure.ErrNotReady)
	}
	if b.kc != nil {
		err := b.kc.Ping(ctx)
		b.acc.set(err)
		if err != nil {
			return fmt.Errorf("keycloak: %w (access changes wait; quotas and usage go on): %w", err, backends.ErrAccessNotReady)
		}
	}
	return nil
}

// Probes implements backends.Diagnoser: Rancher (API, key, cluster, managed projects, quota
// mapping), the cluster's Kubernetes API through Rancher's proxy, and Keycloak — each on its own,
// so one that fails or hangs does not hide the others.
func (b *Backend) Probes() []backends.Probe {
	probes := []backends.Probe{{Upstream: "rancher", Run: b.rancherChecks}, {Upstream: "kubernetes", Run: b.kubeChecks}}
	if b.kc != nil {
		probes = append(probes, backends.Probe{Upstream: "keycloak", Run: b.keycloakChecks})
	}
	return probes
}

// rancherChecks: the API and the key first (nothing else answers without them).
func (b *Backend) rancherChecks(ctx context.Context) []backends.Check {
	var out []backends.Check
	err := b.v3.APIRoot(ctx)
	out = append(out, check("rancher api", err, b.cfg.baseURL+"/v3 answers and accepts the API key"))
	if err != nil {
		return out
	}
	out = append(out, b.tokenCheck(ctx))
	c, err := b.v3.Cluster(ctx, b.cfg.clusterID)
	out = append(out, check("rancher cluster", err, fmt.Sprintf("%s (%s) is %s", c.ID, c.Name, c.State)), b.projectsCheck(ctx))
	keys := make([]string, 0, len(b.cfg.quotaKeys))
	for _, k := range b.cfg.quotaKeys {
		keys = append(keys, fmt.Sprintf("%s→%s (%s)", k.Component, k.Key, k.Kind))
	}
	detail := strings.Join(keys, ", ")
	if len(keys) == 0 {
		detail = "no component maps to a quota key (give components type cpu, ram, storage, gpu or a k8s_resource)"
	}
	return append(out, backends.Check{Name: "quota components", OK: len(keys) > 0, Detail: detail})
}

// kubeChecks reach the cluster's Kubernetes API through Rancher's proxy: its version and a
// namespace list (both bounded by ctx).
func (b *Backend) kubeChecks(ctx context.Context) []backends.Check {
	v, err := b.kube.cs.Discovery().ServerVersion(ctx)
	if err != nil {
		return []backends.Check{check("kubernetes proxy", kubeErr("get version", err), "")}
	}
	if _, err := b.kube.cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		return []backends.Check{check("kubernetes proxy", kubeErr("list namespaces", err), "")}
	}
	return []backends.Check{check("kubernetes proxy", nil, fmt.Sprintf("/k8s/clusters/%s reaches Kubernetes %s", b.cfg.clusterID, v.GitVersion)),
		b.rightsCheck(ctx)}
}

// kubeRights are what the backend does in the cluster, cluster-wide (docs/rancher.md, Setup).
func (b *Backend) kubeRights() []rancherapi.Access {
	var out []rancherapi.Access
	add := func(resource string, verbs ...string) {
		for _, v := range verbs {
			out = append(out, rancherapi.Access{Verb: v, Resource: resource})
		}
	}
	add("namespaces", "list", "get", "create", "update", "delete")
	add("resourcequotas", "list", "get", "create", "update")
	if b.cfg.usageSource == UsageFromPods {
		add("pods", "list")
		add("persistentvolumeclaims", "list")
	}
	return out
}

// rightsCheck asks the cluster (SelfSubjectAccessReviews through the proxy) whether the key's
// user may do everything the backend does there.
func (b *Backend) rightsCheck(ctx context.Context) backends.Check {
	want := b.kubeRights()
	denied, err := b.v3.Denied(ctx, b.cfg.clusterID, want)
	switch {
	case err != nil:
		return check("kubernetes rights", err, "")
	case len(denied) > 0:
		names := make([]string, len(denied))
		for i, a := range denied {
			names[i] = a.String()
		}
		return backends.Check{Name: "kubernetes rights", Detail: fmt.Sprintf("the key's user may not, cluster-wide: %s "+
			"(make it owner of cluster %s)", strings.Join(names, ", "), b.cfg.clusterID)}
	}
	names := make([]string, len(want))
	for i, a := range want {
		names[i] = a.String()
	}
	return check("kubernetes rights", nil, "cluster-wide: "+strings.Join(names, ", "))
}

// check is a line: ok with its detail, or the error.
func check(name string, err error, ok string) backends.Check {
	if err != nil {
		return backends.Check{Name: name, Detail: err.Error()}
	}
	return backends.Check{Name: name, OK: true, Detail: ok}
}

// keycloakChecks are the Keycloak lines (keycloak.Client.Diagnose).
func (b *Backend) keycloakChecks(ctx context.Context) []backends.Check {
	lines := b.kc.Diagnose(ctx)
	out := make([]backends.Check, len(lines))
	for i, l := range lines {
		out[i] = backends.Check(l)
	}
	return out
}

func (b *Backend) tokenCheck(ctx context.Context) backends.Check {
	t, err := b.v3.Token(ctx, b.cfg.accessKey)
	switch {
	case err != nil && (failure.HasStatus(err, 401)):
		return backends.Check{Name: "rancher token", Detail: err.Error()}
	case err != nil:
		return backends.Check{Name: "rancher token", OK: true, Detail: "valid (details not readable: " + err.Error() + ")"}
	case t.Expired || (t.Enabled != nil && !*t.Enabled):
		return backends.Check{Name: "rancher token", Detail: fmt.Sprintf("%s is expired or disabled", t.ID)}
	}
	detail := t.ID + " is valid"
	if t.ExpiresAt != "" {
		detail += ", expires " + t.ExpiresAt
		if exp, err := time.Parse(time.RFC3339, t.ExpiresAt); err == nil && time.Until(exp) < 14*24*time.Hour {
			detail += " (within 14 days: renew it)"
		}
	}
	return backends.Check{Name: "rancher token", OK: true, Detail: detail}
}

func (b *Backend) projectsCheck(ctx context.Context) backends.Check {
	ps, err := b.v3.Projects(ctx, b.cfg.clusterID, "")
	if err != nil {
		return backends.Check{Name: "managed projects", Detail: err.Error()}
	}
	n, system := 0, false
	for _, p := range ps {
		if p.Annotations[annManaged] == "true" && strings.HasPrefix(p.Name, b.cfg.prefix) {
			n++
		}
		system = system || p.Labels[systemProjectLabel] == "true"
	}
	detail := fmt.Sprintf("%d of %d projects in the cluster (prefix %q)", n, len(ps), b.cfg.prefix)
	if !system {
		// Rancher lists only the projects a user may read; every cluster has a System project.
		return backends.Check{Name: "managed projects", Detail: detail + ", but not the cluster's System project: the key's user " +
			"cannot read every project of " + b.cfg.clusterID + ", so a name taken by another project looks free (make it owner of the cluster)"}
	}
	return backends.Check{Name: "managed projects", OK: true, Detail: detail}
}

// Evaluate implements backends.OrderEvaluator: orders that could not be carried out are
// rejected before approval, so nothing is created for them — missing customer or project
// slugs, a name that is no valid namespace name, limits a quota cannot hold.
func (b *Backend) Evaluate(_ context.Context, review backends.OrderReview) (backends.Decision, string, error) {
	res := review.Resource
	switch review.Type {
	case "Create":
		if err := checkSlugs(res); err != nil {
			return backends.Reject, publicMessage(err), nil
		}
		slug := res.Slug
		if slug == "" {
			slug = predictSlug(res.Name)
		}
		name := projectName(b.cfg.prefix, baseName(backends.Resource{Slug: slug, UUID: res.UUID}))
		if err := checkNamespaceName(name); err != nil {
			return backends.Reject, publicMessage(err), nil
		}
	case "Update":
	default:
		return backends.Accept, "", nil
	}
	if _, err := b.cfg.quotaKeys.hard(res.Limits); err != nil {
		return backends.Reject, publicMessage(err), nil
	}
	return backends.Accept, "", nil
}

func publicMessage(err error) string {
	var e *failure.Error
	if errors.As(err, &e) {
		return e.Msg
	}
	return err.Error()
}
