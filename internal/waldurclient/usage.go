package waldurclient

import (
	"context"
	"net/http"
	"net/url"
)

// ListComponentUsages lists a resource's component usages for one billing period (YYYY-MM-01).
func (c *Client) ListComponentUsages(ctx context.Context, resourceUUID, billingPeriod string) ([]ComponentUsage, error) {
	q := fields("uuid", "type", "usage", "resource_uuid")
	q.Set("resource_uuid", resourceUUID)
	q.Set("billing_period", billingPeriod)
	return listAll[ComponentUsage](ctx, c, "/api/marketplace-component-usages/", "", q)
}

// ListOfferingUsages lists the component usages of every resource of an offering for one billing
// period: one paged listing instead of one request per resource.
func (c *Client) ListOfferingUsages(ctx context.Context, offeringUUID, billingPeriod string) ([]ComponentUsage, error) {
	q := fields("uuid", "type", "usage", "resource_uuid")
	q.Set("offering_uuid", offeringUUID)
	q.Set("billing_period", billingPeriod)
	return listAll[ComponentUsage](ctx, c, "/api/marketplace-component-usages/", "", q)
}

// ListOfferingUserUsages lists per-user usages of every resource of an offering for one period.
func (c *Client) ListOfferingUserUsages(ctx context.Context, offeringUUID, billingPeriod string) ([]ComponentUserUsage, error) {
	q := url.Values{"offering_uuid": {offeringUUID}, "component_usage__billing_period": {billingPeriod}}
	q["field"] = []string{"component_usage", "component_type", "resource_uuid", "username", "usage"}
	return listAll[ComponentUserUsage](ctx, c, "/api/marketplace-component-user-usages/", "", q)
}

// SetUsage reports a resource's usage totals; date is an RFC 3339 timestamp in the period.
func (c *Client) SetUsage(ctx context.Context, resourceUUID, date string, items []UsageItem) error {
	body := map[string]any{"usages": items, "resource": resourceUUID, "date": date}
	_, err := c.do(ctx, call{method: http.MethodPost, tmpl: "/api/marketplace-component-usages/set_usage/", body: body}, nil)
	return err
}

// SetUserUsages reports per-user shares of one component usage.
func (c *Client) SetUserUsages(ctx context.Context, componentUsageUUID string, items []UserUsageItem) error {
	return c.post(ctx, "/api/marketplace-component-usages/{uuid}/set_user_usages/", componentUsageUUID, map[string]any{"usages": items})
}
