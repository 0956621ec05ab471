package waldurclient

import (
	"context"
	"net/http"
)

// EventSubscription is an agent's subscription to one object type's events; its UUID is the
// broker login and UserUUID the broker's virtual host.
type EventSubscription struct {
	UUID     string `json:"uuid"`
	UserUUID string `json:"user_uuid"`
}

// EventQueue is the broker queue Waldur declared for a subscription and an offering.
type EventQueue struct {
	QueueName string `json:"queue_name"`
	VHost     string `json:"vhost"`
}

// RegisterEventSubscription registers (or finds: Waldur returns the existing one) the
// identity's subscription to an object type's events.
func (c *Client) RegisterEventSubscription(ctx context.Context, identityUUID, objectType, description string) (EventSubscription, error) {
	var s EventSubscription
	_, err := c.do(ctx, call{method: http.MethodPost, tmpl: "/api/marketplace-site-agent-identities/{uuid}/register_event_subscription/",
		id: identityUUID, body: map[string]string{"observable_object_type": objectType, "description": description}}, &s)
	return s, err
}

// CreateEventQueue asks Waldur to declare the subscription's queue for an offering (idempotent);
// it must exist before the agent subscribes to it.
func (c *Client) CreateEventQueue(ctx context.Context, subscriptionUUID, offeringUUID, objectType string) (EventQueue, error) {
	var q EventQueue
	_, err := c.do(ctx, call{method: http.MethodPost, tmpl: "/api/event-subscriptions/{uuid}/create_queue/",
		id: subscriptionUUID, body: map[string]string{"offering_uuid": offeringUUID, "object_type": objectType}}, &q)
	return q, err
}
