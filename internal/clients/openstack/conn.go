package openstack

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	gos "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
)

// Connection holds the Keystone connection keys, with the names every backend uses in its
// settings (embed it with `mapstructure:",squash"`, or nest it).
type Connection struct {
	AuthURL           string        `mapstructure:"auth_url"`
	Username          string        `mapstructure:"username"`
	Password          secret.Secret `mapstructure:"password"`
	UserDomainName    string        `mapstructure:"user_domain_name"`
	ProjectName       string        `mapstructure:"project_name"`
	ProjectDomainName string        `mapstructure:"project_domain_name"`
	RegionName        string        `mapstructure:"region_name"`
	// Interface selects catalog endpoints: public (default), internal or admin.
	Interface string `mapstructure:"interface"`
	VerifySSL *bool  `mapstructure:"verify_ssl"`
	CACert    string `mapstructure:"ca_cert"` // PEM file with extra trusted CAs
}

// DefaultDomain is Keystone's default domain name.
const DefaultDomain = "Default"

// ApplyDefaults fills in the optional keys.
func (c *Connection) ApplyDefaults() {
	for _, d := range []struct {
		v   *string
		def string
	}{{&c.UserDomainName, DefaultDomain}, {&c.ProjectDomainName, DefaultDomain}, {&c.Interface, "public"}} {
		if *d.v == "" {
			*d.v = d.def
		}
	}
	if c.VerifySSL == nil {
		t := true
		c.VerifySSL = &t
	}
}

// Validate checks the keys after ApplyDefaults; errors name the key under prefix (such as
// "backend_settings." or "backend_settings.openstack.").
func (c *Connection) Validate(prefix string) error {
	required := []struct{ key, value string }{
		{"auth_url", c.AuthURL}, {"username", c.Username}, {"password", c.Password.Reveal()}, {"project_name", c.ProjectName},
	}
	for _, r := range required {
		if strings.TrimSpace(r.value) == "" {
			return fmt.Errorf("%s%s: is required", prefix, r.key)
		}
	}
	if u, err := url.Parse(c.AuthURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%sauth_url: want an http(s) URL such as https://keystone.example.com:5000/v3, got %q", prefix, c.AuthURL)
	}
	switch c.Interface {
	case "public", "internal", "admin":
	default:
		return fmt.Errorf("%sinterface: must be public, internal or admin, got %q", prefix, c.Interface)
	}
	return nil
}

// CertPool loads ca_cert (nil when not configured); errors name the key under prefix.
func (c *Connection) CertPool(prefix string) (*x509.CertPool, error) {
	if c.CACert == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(c.CACert)
	if err != nil {
		return nil, fmt.Errorf("%sca_cert: %w", prefix, err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%sca_cert: %s holds no PEM certificate", prefix, c.CACert)
	}
	return pool, nil
}

// Clients are the authenticated service clients. Image (Glance) and LoadBalancer (Octavia)
// are nil when the catalog has no such service, or when the catalog lists it but its version
// discovery failed (the service is down): ImageErr and LoadBalancerErr then say why, so that
// only the work needing that service fails, and a later Connect tries it again.
type Clients struct {
	Provider                           *gophercloud.ProviderClient
	Identity, Compute, Volume, Network *gophercloud.ServiceClient
	Image, LoadBalancer                *gophercloud.ServiceClient
	ImageErr, LoadBalancerErr          error
	// ProjectID is the project the token is scoped to; UserID the authenticated user.
	ProjectID, UserID string
}

// Connect authenticates on hc (see NewHTTPClient) and builds the service clients from the
// catalog.
func Connect(ctx context.Context, hc *http.Client, s Connection) (*Clients, error) {
	provider, err := gos.NewClient(s.AuthURL)
	if err != nil {
		return nil, fmt.Errorf("openstack auth_url: %w", err)
	}
	provider.HTTPClient = *hc
	provider.UserAgent.Prepend("site-agent")
	opts := gophercloud.AuthOptions{
		IdentityEndpoint: s.AuthURL, Username: s.Username, Password: s.Password.Reveal(),
		DomainName: s.UserDomainName, AllowReauth: true,
		Scope: &gophercloud.AuthScope{ProjectName: s.ProjectName, DomainName: s.ProjectDomainName},
	}
	if err := gos.Authenticate(ctx, provider, opts); err != nil {
		return nil, Classify("keystone", fmt.Errorf("authenticate as %s: %w", s.Username, err))
	}
	eo := gophercloud.EndpointOpts{Region: s.RegionName, Availability: gophercloud.Availability(s.Interface)}
	c := &Clients{Provider: provider}
	if err := c.build(provider, eo, s); err != nil {
		return nil, err
	}
	if r, ok := provider.GetAuthResult().(tokens.CreateResult); ok {
		if p, err := r.ExtractProject(); err == nil && p != nil {
			c.ProjectID = p.ID
		}
		if u, err := r.ExtractUser(); err == nil && u != nil {
			c.UserID = u.ID
		}
	}
	return c, nil
}

func (c *Clients) build(provider *gophercloud.ProviderClient, eo gophercloud.EndpointOpts, s Connection) error {
	steps := []struct {
		name string
		dst  **gophercloud.ServiceClient
		new  func(*gophercloud.ProviderClient, gophercloud.EndpointOpts) (*gophercloud.ServiceClient, error)
	}{
		{"identity", &c.Identity, gos.NewIdentityV3},
		{"compute", &c.Compute, gos.NewComputeV2},
		{"volumev3", &c.Volume, gos.NewBlockStorageV3},
		{"network", &c.Network, gos.NewNetworkV2},
	}
	for _, st := range steps {
		sc, err := st.new(provider, eo)
		if err != nil {
			return failure.Wrap(err, fmt.Sprintf("openstack catalog has no %s endpoint (region %q, interface %s)", st.name, s.RegionName, s.Interface))
		}
		*st.dst = sc
	}
	optional := []struct {
		name   string
		dst    **gophercloud.ServiceClient
		errDst *error
		new    func(*gophercloud.ProviderClient, gophercloud.EndpointOpts) (*gophercloud.ServiceClient, error)
	}{{"image", &c.Image, &c.ImageErr, gos.NewImageV2}, {"load-balancer", &c.LoadBalancer, &c.LoadBalancerErr, gos.NewLoadBalancerV2}}
	for _, st := range optional {
		sc, err := st.new(provider, eo)
		var missing *gophercloud.ErrEndpointNotFound
		switch {
		case err == nil:
			*st.dst = sc
		case !errors.As(err, &missing):
			// Listed but not answering its version discovery: a transient outage of a service
			// most work does not need.
			*st.errDst = Classify(st.name, fmt.Errorf("openstack catalog lists %s, but it did not answer: %w", st.name, err))
		}
	}
	return nil
}

// Complete reports whether every service the catalog lists answered (see ImageErr).
func (c *Clients) Complete() bool { return c.ImageErr == nil && c.LoadBalancerErr == nil }
