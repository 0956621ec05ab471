package waldurclient

import (
	"context"
	"net/http"
	"net/url"
)

// Me returns the authenticated user.
func (c *Client) Me(ctx context.Context) (User, error) {
	var u User
	_, err := c.do(ctx, call{method: http.MethodGet, tmpl: "/api/users/me/"}, &u)
	return u, err
}

// Ping checks the token cheaply (users/me with a one-field response).
func (c *Client) Ping(ctx context.Context) error {
	var u User
	_, err := c.do(ctx, call{method: http.MethodGet, tmpl: "/api/users/me/", query: fields("uuid")}, &u)
	return err
}

// GetOffering fetches the provider's view of an offering. With no field names it returns the
// fields the agent uses.
func (c *Client) GetOffering(ctx context.Context, uuid string, fieldNames ...string) (Offering, error) {
	if len(fieldNames) == 0 {
		fieldNames = []string{"uuid", "name", "state", "customer_uuid", "customer_name", "backend_id", "components", "plugin_options"}
	}
	var o Offering
	_, err := c.do(ctx, call{method: http.MethodGet, tmpl: "/api/marketplace-provider-offerings/{uuid}/", id: uuid,
		query: fields(fieldNames...)}, &o)
	return o, err
}

// CreateOfferingComponent adds a component to an offering.
func (c *Client) CreateOfferingComponent(ctx context.Context, offeringUUID string, comp map[string]any) error {
	return c.post(ctx, "/api/marketplace-provider-offerings/{uuid}/create_offering_component/", offeringUUID, comp)
}

// UpdateOfferingComponent changes an existing component (comp must carry its uuid).
func (c *Client) UpdateOfferingComponent(ctx context.Context, offeringUUID string, comp map[string]any) error {
	return c.post(ctx, "/api/marketplace-provider-offerings/{uuid}/update_offering_component/", offeringUUID, comp)
}

// ServiceProviders lists service providers of a customer (first page).
func (c *Client) ServiceProviders(ctx context.Context, customerUUID string) ([]ServiceProvider, error) {
	q := url.Values{"customer_uuid": {customerUUID}, "field": {"uuid"}}
	return first[ServiceProvider](ctx, c, "/api/marketplace-service-providers/", q)
}

// FindIdentity returns the agent identity with that name, if any.
func (c *Client) FindIdentity(ctx context.Context, name string) (Identity, bool, error) {
	ids, err := first[Identity](ctx, c, "/api/marketplace-site-agent-identities/", url.Values{"name": {name}})
	if err != nil || len(ids) == 0 {
		return Identity{}, false, err
	}
	for _, id := range ids {
		if id.Name == name {
			return id, true, nil
		}
	}
	return Identity{}, false, nil
}

// CreateIdentity registers a new agent identity.
func (c *Client) CreateIdentity(ctx context.Context, req IdentityRequest) (Identity, error) {
	var id Identity
	_, err := c.do(ctx, call{method: http.MethodPost, tmpl: "/api/marketplace-site-agent-identities/", body: req}, &id)
	return id, err
}

// UpdateIdentity replaces an identity's record.
func (c *Client) UpdateIdentity(ctx context.Context, uuid string, req IdentityRequest) (Identity, error) {
	var id Identity
	_, err := c.do(ctx, call{method: http.MethodPut, tmpl: "/api/marketplace-site-agent-identities/{uuid}/", id: uuid, body: req}, &id)
	return id, err
}

// RegisterService registers (idempotently, by name) a service of an identity.
func (c *Client) RegisterService(ctx context.Context, identityUUID, name, mode string) (Service, error) {
	var s Service
	_, err := c.do(ctx, call{method: http.MethodPost, tmpl: "/api/marketplace-site-agent-identities/{uuid}/register_service/",
		id: identityUUID, body: map[string]string{"name": name, "mode": mode}}, &s)
	return s, err
}

// RegisterProcessor registers (idempotently, by name) a processor of a service.
func (c *Client) RegisterProcessor(ctx context.Context, serviceUUID, name, backendType, backendVersion string) error {
	return c.post(ctx, "/api/marketplace-site-agent-services/{uuid}/register_processor/", serviceUUID,
		map[string]string{"name": name, "backend_type": backendType, "backend_version": backendVersion})
}

// Version returns Waldur's version string.
func (c *Client) Version(ctx context.Context) (string, error) {
	var v struct {
		Version string `json:"version"`
	}
	_, err := c.do(ctx, call{method: http.MethodGet, tmpl: "/api/version/"}, &v)
	return v.Version, err
}
