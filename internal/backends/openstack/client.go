package openstack

import (
	"context"

	"github.com/gophercloud/gophercloud/v2"

	osc "github.com/waldur/site-agent/internal/clients/openstack"
	"github.com/waldur/site-agent/internal/clients/openstack/tenant"
)

// clients are the authenticated service clients and the ids resolved once per connection.
type clients struct {
	provider                           *gophercloud.ProviderClient
	identity, compute, volume, network *gophercloud.ServiceClient
	// image (Glance) and loadBalancer (Octavia) are nil when the catalog has no such service,
	// or when it did not answer (imageErr, loadBalancerErr say so; see osc.Clients).
	image, loadBalancer       *gophercloud.ServiceClient
	imageErr, loadBalancerErr error
	complete                  bool

	domainID, userDomainID, roleID string
	extNetID                       string
}

// conn returns the connected clients, authenticating and resolving names on first use. A
// failed attempt is not cached, nor one where a listed optional service did not answer: the
// next call tries again.
func (b *Backend) conn(ctx context.Context) (*clients, error) {
	b.connMu.Lock()
	defer b.connMu.Unlock()
	if b.cl != nil {
		return b.cl, nil
	}
	c, err := b.connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := b.resolve(ctx, c); err != nil {
		return nil, err
	}
	if c.complete {
		b.cl = c
	}
	return c, nil
}

// connect authenticates and builds the service clients from the catalog.
func (b *Backend) connect(ctx context.Context) (*clients, error) {
	sc, err := osc.Connect(ctx, b.hc, b.settings.Connection)
	if err != nil {
		return nil, err
	}
	return &clients{provider: sc.Provider, identity: sc.Identity, compute: sc.Compute, volume: sc.Volume,
		network: sc.Network, image: sc.Image, loadBalancer: sc.LoadBalancer,
		imageErr: sc.ImageErr, loadBalancerErr: sc.LoadBalancerErr, complete: sc.Complete()}, nil
}

// resolve looks up the ids behind configured names.
func (b *Backend) resolve(ctx context.Context, c *clients) error {
	s := b.settings
	var err error
	if c.domainID, err = findDomain(ctx, c.identity, s.Domain); err != nil {
		return err
	}
	c.userDomainID = c.domainID
	if s.UserDomain != s.Domain {
		if c.userDomainID, err = findDomain(ctx, c.identity, s.UserDomain); err != nil {
			return err
		}
	}
	if c.roleID, err = findRole(ctx, c.identity, s.MemberRole); err != nil {
		return err
	}
	c.extNetID, err = findExternalNetwork(ctx, c.network, s.ExternalNetwork)
	return err
}

func findDomain(ctx context.Context, id *gophercloud.ServiceClient, name string) (string, error) {
	return tenant.FindDomain(ctx, id, name)
}

func findRole(ctx context.Context, id *gophercloud.ServiceClient, name string) (string, error) {
	return tenant.FindRole(ctx, id, name, "member_role")
}

// services are the clients as the shared tenant code takes them.
func (c *clients) services() tenant.Services {
	return tenant.Services{Identity: c.identity, Compute: c.compute, Volume: c.volume, Network: c.network,
		Image: c.image, LoadBalancer: c.loadBalancer, ImageErr: c.imageErr, LoadBalancerErr: c.loadBalancerErr}
}

var findExternalNetwork = osc.FindExternalNetwork

// dropConn forgets the connection so the next call re-authenticates (after auth errors).
func (b *Backend) dropConn() {
	b.connMu.Lock()
	b.cl = nil
	b.connMu.Unlock()
}
