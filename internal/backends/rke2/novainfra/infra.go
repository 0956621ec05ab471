package novainfra

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/rke2"
	osc "github.com/waldur/site-agent/internal/clients/openstack"
	"github.com/waldur/site-agent/internal/clients/openstack/tenant"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/upstream"
)

var _ rke2.Infra = (*Infra)(nil)

// computeMicroversion: server tags on create need 2.52 (the tags list filter 2.26).
const computeMicroversion = "2.52"

// Infra is the OpenStack side of rke2 clusters.
type Infra struct {
	settings   *rke2.Settings
	log        *zap.Logger
	hc         *http.Client
	components backends.Components // the offering's (the worker_nodes limit, for diagnostics)

	mu sync.Mutex
	cl *conn
	// clusters are the connections scoped to each cluster's own project (tenant: per_cluster),
	// by cluster UUID; a project enters only once its role and quotas are set in this process.
	clusters map[string]*conn
	// chains are the network chains ensured in this process, by cluster UUID (chains.go).
	chains map[string]chain
	// resolved are flavors and images found by name lately (lookups.go).
	resolved map[string]resolved
}

// Options are test and tuning hooks for New.
type Options struct {
	// Transport is the innermost HTTP transport, under the retry layer (nil: a pooled
	// transport honouring verify_ssl and ca_cert). Tests use it to count or break requests.
	Transport http.RoundTripper
	// RetryWaitMin and RetryWaitMax bound the backoff between attempts (default: the
	// upstreams.openstack section, else 250ms–5s).
	RetryWaitMin, RetryWaitMax time.Duration
	Logger                     *zap.Logger
	// Params are the backend's parameters (their upstreams.openstack section applies).
	Params backends.Params
}

// conn is one authenticated connection and the ids resolved with it.
type conn struct {
	*osc.Clients
	compute  *gophercloud.ServiceClient // Compute at computeMicroversion
	extNetID string
	// per_cluster, on the management connection: the domain of the clusters' projects and the
	// role the connection's user gets on them.
	domainID, roleID string
}

// New builds an Infra on decoded settings; it makes no network call.
func New(s *rke2.Settings, o Options) (*Infra, error) {
	pool, err := s.OpenStack.CertPool("backend_settings.openstack.")
	if err != nil {
		return nil, err
	}
	log := o.Logger
	if log == nil {
		log = zap.NewNop()
	}
	nested, _ := o.Params.Settings["openstack"].(map[string]any)
	_, timeout := nested["request_timeout"]
	_, retries := nested["retries"]
	hc := osc.NewHTTPClient(osc.WithUpstream(osc.HTTPOptions{Base: o.Transport, VerifyTLS: *s.OpenStack.VerifySSL, RootCAs: pool,
		Retries: *s.OpenStack.Retries, Timeout: s.OpenStack.RequestTimeout, WaitMin: o.RetryWaitMin, WaitMax: o.RetryWaitMax,
		Logger: log}, o.Params.Upstreams.Get(upstream.OpenStack), osc.Pinned{Timeout: timeout, Retries: retries}))
	return &Infra{settings: s, log: log, hc: hc, components: o.Params.Components, clusters: map[string]*conn{}, chains: map[string]chain{},
		resolved: map[string]resolved{}}, nil
}

// Close releases idle connections.
func (in *Infra) Close() error {
	in.hc.CloseIdleConnections()
	return nil
}

// conn returns the connection, authenticating on first use; a failure is not cached.
func (in *Infra) conn(ctx context.Context) (*conn, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.cl != nil {
		return in.cl, nil
	}
	o := in.settings.OpenStack
	cl, err := in.connect(ctx, o.Connection)
	if err != nil {
		return nil, err
	}
	if cl.extNetID, err = osc.FindExternalNetwork(ctx, cl.Network, o.ExternalNetworkName); err != nil {
		return nil, err
	}
	if o.PerCluster() {
		if cl.domainID, err = tenant.FindDomain(ctx, cl.Identity, o.ProjectDomainName); err != nil {
			return nil, err
		}
		if cl.roleID, err = tenant.FindRole(ctx, cl.Identity, o.TenantRole, osPrefix+"tenant_role"); err != nil {
			return nil, err
		}
	}
	in.cl = cl
	return in.cl, nil
}

// osPrefix names the settings in errors.
const osPrefix = "backend_settings.openstack."

// connect authenticates with the connection's scope; Glance must answer (images).
func (in *Infra) connect(ctx context.Context, s osc.Connection) (*conn, error) {
	sc, err := osc.Connect(ctx, in.hc, s)
	if err != nil {
		return nil, err
	}
	if sc.ImageErr != nil {
		return nil, sc.ImageErr
	}
	if sc.Image == nil {
		return nil, failure.Errorf("openstack: the catalog has no image (Glance) endpoint; base_image_name cannot be resolved")
	}
	compute := *sc.Compute
	compute.Microversion = computeMicroversion
	return &conn{Clients: sc, compute: &compute}, nil
}

// Flavor implements rke2.FlavorSource: a flavor by id, else by name; a missing one wraps
// failure.ErrNotFound.
func (in *Infra) Flavor(ctx context.Context, nameOrID string) (rke2.Flavor, error) {
	c, err := in.conn(ctx)
	if err != nil {
		return rke2.Flavor{}, err
	}
	f, err := in.cachedFlavor(ctx, c, nameOrID)
	if err != nil {
		return rke2.Flavor{}, err
	}
	return rke2.Flavor{Name: f.Name, VCPUs: f.VCPUs, RAMMB: f.RAM}, nil
}

func (c *conn) flavor(ctx context.Context, nameOrID string) (*flavors.Flavor, error) {
	f, err := flavors.Get(ctx, c.compute, nameOrID).Extract()
	if err == nil {
		return f, nil
	}
	if !osc.IsNotFound(err) {
		return nil, osc.Classify("nova", fmt.Errorf("get flavor %q: %w", nameOrID, err))
	}
	page, err := flavors.ListDetail(c.compute, flavors.ListOpts{}).AllPages(ctx)
	if err != nil {
		return nil, osc.Classify("nova", fmt.Errorf("list flavors: %w", err))
	}
	all, err := flavors.ExtractFlavors(page)
	if err != nil {
		return nil, err
	}
	for i := range all {
		if all[i].Name == nameOrID {
			return &all[i], nil
		}
	}
	return nil, fmt.Errorf("openstack: flavor %q: %w", nameOrID, failure.ErrNotFound)
}

// image resolves a Glance image by name (exactly one active image).
func (c *conn) image(ctx context.Context, name string) (string, error) {
	page, err := images.List(c.Image, images.ListOpts{Name: name}).AllPages(ctx)
	if err != nil {
		return "", osc.Classify("glance", fmt.Errorf("find image %q: %w", name, err))
	}
	all, err := images.ExtractImages(page)
	if err != nil {
		return "", err
	}
	switch len(all) {
	case 0:
		return "", fmt.Errorf("openstack: image %q (base_image_name): %w", name, failure.ErrNotFound)
	case 1:
		return all[0].ID, nil
	}
	return "", failure.Errorf("openstack: %d images are named %q (base_image_name); keep one", len(all), name)
}
