package openstack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/gophercloud/gophercloud/v2"
	gos "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/domains"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/waldur/site-agent/internal/failure"
)

// clients are the authenticated service clients and the ids resolved once per connection.
type clients struct {
	provider                           *gophercloud.ProviderClient
	identity, compute, volume, network *gophercloud.ServiceClient
	// image (Glance) and loadBalancer (Octavia) are nil when the catalog has no such service.
	image, loadBalancer *gophercloud.ServiceClient

	domainID, userDomainID, roleID string
	extNetID                       string
}

// conn returns the connected clients, authenticating and resolving names on first use. A
// failed attempt is not cached: the next call tries again.
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
	b.cl = c
	return c, nil
}

// connect authenticates and builds the service clients from the catalog.
func (b *Backend) connect(ctx context.Context) (*clients, error) {
	s := b.settings
	provider, err := gos.NewClient(s.AuthURL)
	if err != nil {
		return nil, fmt.Errorf("openstack auth_url: %w", err)
	}
	provider.HTTPClient = *b.hc
	provider.UserAgent.Prepend("site-agent")
	opts := gophercloud.AuthOptions{
		IdentityEndpoint: s.AuthURL, Username: s.Username, Password: s.Password.Reveal(),
		DomainName: s.UserDomainName, AllowReauth: true,
		Scope: &gophercloud.AuthScope{ProjectName: s.ProjectName, DomainName: s.ProjectDomainName},
	}
	if err := gos.Authenticate(ctx, provider, opts); err != nil {
		return nil, classify("keystone", fmt.Errorf("authenticate as %s: %w", s.Username, err))
	}
	eo := gophercloud.EndpointOpts{Region: s.RegionName, Availability: gophercloud.Availability(s.Interface)}
	c := &clients{provider: provider}
	steps := []struct {
		name string
		dst  **gophercloud.ServiceClient
		new  func(*gophercloud.ProviderClient, gophercloud.EndpointOpts) (*gophercloud.ServiceClient, error)
	}{
		{"identity", &c.identity, gos.NewIdentityV3},
		{"compute", &c.compute, gos.NewComputeV2},
		{"volumev3", &c.volume, gos.NewBlockStorageV3},
		{"network", &c.network, gos.NewNetworkV2},
	}
	for _, st := range steps {
		sc, err := st.new(provider, eo)
		if err != nil {
			return nil, failure.Wrap(err, fmt.Sprintf("openstack catalog has no %s endpoint (region %q, interface %s)", st.name, s.RegionName, s.Interface))
		}
		*st.dst = sc
	}
	optional := []struct {
		dst **gophercloud.ServiceClient
		new func(*gophercloud.ProviderClient, gophercloud.EndpointOpts) (*gophercloud.ServiceClient, error)
	}{{&c.image, gos.NewImageV2}, {&c.loadBalancer, gos.NewLoadBalancerV2}}
	for _, st := range optional {
		sc, err := st.new(provider, eo)
		var missing *gophercloud.ErrEndpointNotFound
		switch {
		case err == nil:
			*st.dst = sc
		case !errors.As(err, &missing):
			return nil, failure.Wrap(err, "openstack catalog")
		}
	}
	return c, nil
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
	page, err := domains.List(id, domains.ListOpts{Name: name}).AllPages(ctx)
	if err != nil {
		return "", classify("keystone", fmt.Errorf("find domain %q: %w", name, err))
	}
	all, err := domains.ExtractDomains(page)
	if err != nil {
		return "", err
	}
	if len(all) != 1 {
		return "", failure.Errorf("openstack: Keystone domain %q not found", name)
	}
	return all[0].ID, nil
}

func findRole(ctx context.Context, id *gophercloud.ServiceClient, name string) (string, error) {
	page, err := roles.List(id, roles.ListOpts{Name: name}).AllPages(ctx)
	if err != nil {
		return "", classify("keystone", fmt.Errorf("find role %q: %w", name, err))
	}
	all, err := roles.ExtractRoles(page)
	if err != nil {
		return "", err
	}
	if len(all) != 1 {
		return "", failure.Errorf("openstack: Keystone role %q (member_role) not found", name)
	}
	return all[0].ID, nil
}

type extNetwork struct {
	networks.Network
	external.NetworkExternalExt
}

// findExternalNetwork resolves external_network by name, then by id, and checks it is external.
func findExternalNetwork(ctx context.Context, nc *gophercloud.ServiceClient, nameOrID string) (string, error) {
	var found []extNetwork
	page, err := networks.List(nc, networks.ListOpts{Name: nameOrID}).AllPages(ctx)
	if err == nil {
		err = networks.ExtractNetworksInto(page, &found)
	}
	if err != nil {
		return "", classify("neutron", fmt.Errorf("find external network %q: %w", nameOrID, err))
	}
	if len(found) == 0 {
		var one extNetwork
		err := networks.Get(ctx, nc, nameOrID).ExtractInto(&one)
		if err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return "", classify("neutron", fmt.Errorf("find external network %q: %w", nameOrID, err))
		}
		if err == nil {
			found = append(found, one)
		}
	}
	switch {
	case len(found) == 0:
		return "", failure.Errorf("openstack: external network %q not found", nameOrID)
	case len(found) > 1:
		return "", failure.Errorf("openstack: %d networks are named %q; set external_network to the id", len(found), nameOrID)
	case !found[0].External:
		return "", failure.Errorf("openstack: network %q is not external (router:external is false)", nameOrID)
	}
	return found[0].ID, nil
}

// classify turns a gophercloud error into the agent's error kinds: HTTP statuses become
// failure.StatusError (transient for 5xx and 429), network failures are transient, context
// errors pass through. svc names the upstream in messages.
func classify(svc string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var pe *failure.Error
	if errors.As(err, &pe) || failure.IsTransient(err) && hasStatus(err) {
		return err
	}
	var ue gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &ue) {
		path := ue.URL
		if u, perr := url.Parse(ue.URL); perr == nil {
			path = u.Path
		}
		se := failure.StatusErr(svc, ue.Method, path, ue.Actual, ue.Body)
		if ue.Actual == http.StatusNotFound {
			return fmt.Errorf("%w: %w", se, failure.ErrNotFound)
		}
		return se
	}
	if failure.IsTransient(err) {
		return failure.Transient(err)
	}
	return err
}

func hasStatus(err error) bool {
	var se *failure.StatusError
	return errors.As(err, &se)
}

func isNotFound(err error) bool {
	return gophercloud.ResponseCodeIs(err, http.StatusNotFound) || errors.Is(err, failure.ErrNotFound)
}

// dropConn forgets the connection so the next call re-authenticates (after auth errors).
func (b *Backend) dropConn() {
	b.connMu.Lock()
	b.cl = nil
	b.connMu.Unlock()
}
