package waldurclient

import (
	"context"
	"net/http"
)

// OrderFields is the sparse fieldset for orders: what Order decodes, a fraction of OrderDetails.
var OrderFields = []string{"uuid", "type", "state", "marketplace_resource_uuid", "resource_name", "backend_id",
	"limits", "attributes", "plan_uuid", "offering_uuid", "project_uuid", "project_slug", "project_name",
	"customer_uuid", "customer_slug", "customer_name", "created", "modified"}

// ListOrders returns the offering's orders in the given states, all pages.
func (c *Client) ListOrders(ctx context.Context, offeringUUID string, states ...string) ([]Order, error) {
	q := fields(OrderFields...)
	q.Set("offering_uuid", offeringUUID)
	q["state"] = states
	return listAll[Order](ctx, c, "/api/marketplace-orders/", "", q)
}

// GetOrder fetches one order.
func (c *Client) GetOrder(ctx context.Context, uuid string) (Order, error) {
	var o Order
	_, err := c.do(ctx, call{method: http.MethodGet, tmpl: "/api/marketplace-orders/{uuid}/", id: uuid, query: fields(OrderFields...)}, &o)
	return o, err
}

// OrderState fetches only an order's state.
func (c *Client) OrderState(ctx context.Context, uuid string) (string, error) {
	var o Order
	_, err := c.do(ctx, call{method: http.MethodGet, tmpl: "/api/marketplace-orders/{uuid}/", id: uuid,
		query: fields("uuid", "state")}, &o)
	return o.State, err
}

// ApproveOrder moves a pending-provider order to executing.
func (c *Client) ApproveOrder(ctx context.Context, uuid string) error {
	return c.post(ctx, "/api/marketplace-orders/{uuid}/approve_by_provider/", uuid, map[string]any{})
}

// RejectOrder rejects a pending-provider order.
func (c *Client) RejectOrder(ctx context.Context, uuid, comment string) error {
	body := map[string]any{}
	if comment != "" {
		body["provider_rejection_comment"] = comment
	}
	return c.post(ctx, "/api/marketplace-orders/{uuid}/reject_by_provider/", uuid, body)
}

// SetOrderDone completes an executing order.
func (c *Client) SetOrderDone(ctx context.Context, uuid string) error {
	return c.post(ctx, "/api/marketplace-orders/{uuid}/set_state_done/", uuid, nil)
}

// SetOrderErred fails an executing order with a message (and optional details).
func (c *Client) SetOrderErred(ctx context.Context, uuid, message, traceback string) error {
	return c.post(ctx, "/api/marketplace-orders/{uuid}/set_state_erred/", uuid,
		map[string]string{"error_message": message, "error_traceback": traceback})
}

func (c *Client) post(ctx context.Context, tmpl, uuid string, body any) error {
	_, err := c.do(ctx, call{method: http.MethodPost, tmpl: tmpl, id: uuid, body: body}, nil)
	return err
}
