package assembly

import (
	"context"
	"strings"
	"time"

	"github.com/waldur/site-agent/internal/backends"
	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
)

// Diagnose implements rke2.Rancher: the v3 and v1 APIs with the configured key, and the
// key's rights on provisioning clusters.
func (r rancherPort) Diagnose(ctx context.Context) []backends.Check {
	check := func(name, path string, ping func(context.Context) error) backends.Check {
		if err := ping(ctx); err != nil {
			return backends.Check{Name: name, Detail: err.Error()}
		}
		return backends.Check{Name: name, OK: true, Detail: r.c.URL() + path}
	}
	return []backends.Check{check("rancher v3 api", "/v3/clusters?limit=1", r.c.PingV3),
		check("rancher v1 provisioning api", "/v1/provisioning.cattle.io.clusters/fleet-default?limit=1", r.c.PingV1), r.rightsCheck(ctx)}
}

// Ping implements rke2.Rancher.
func (r rancherPort) Ping(ctx context.Context, fresh time.Duration) error {
	if r.c.AnsweredWithin(fresh) {
		return nil
	}
	return r.c.PingV1(ctx)
}

// provRights are what the backend needs on every provisioning cluster in fleet-default: make
// them, find one by its resource label, and tell whose a name is. (A cluster's creator owns it,
// so updating and deleting its own need nothing more; Rancher's standard users may create
// clusters but not read others'.)
var provRights = []rancherapi.Access{
	{Verb: "create", Group: "provisioning.cattle.io", Resource: "clusters", Namespace: "fleet-default"},
	{Verb: "list", Group: "provisioning.cattle.io", Resource: "clusters", Namespace: "fleet-default"},
	{Verb: "get", Group: "provisioning.cattle.io", Resource: "clusters", Namespace: "fleet-default"},
}

// rightsCheck asks Rancher's own cluster `local`, where provisioning clusters are Kubernetes
// objects, whether the key's user has provRights (SelfSubjectAccessReviews through the proxy,
// which any key may ask).
func (r rancherPort) rightsCheck(ctx context.Context) backends.Check {
	names := func(l []rancherapi.Access) string {
		out := make([]string, len(l))
		for i, a := range l {
			out[i] = a.String()
		}
		return strings.Join(out, ", ")
	}
	denied, err := r.c.Denied(ctx, "local", provRights)
	switch {
	case err != nil:
		return backends.Check{Name: "rancher rights", Detail: err.Error()}
	case len(denied) > 0:
		return backends.Check{Name: "rancher rights", Detail: "the key's user may not " + names(denied) +
			" (Rancher's standard users may create clusters but not see others'; give it a global role that may manage every cluster)"}
	}
	return backends.Check{Name: "rancher rights", OK: true, Detail: names(provRights)}
}
