package waldursim

import (
	"encoding/json"
	"testing"

	"github.com/waldur/site-agent/internal/sim/stompsim"
)

// subscribe registers an identity, a subscription for typ and its queue for the test offering.
func subscribe(t *testing.T, w *world, typ string) (sub, queue string) {
	t.Helper()
	id := w.call(t, "POST", "/api/marketplace-site-agent-identities/", identityBody("agent-"+typ, "1")).object(t)["uuid"].(string)
	s := w.call(t, "POST", "/api/marketplace-site-agent-identities/"+id+"/register_event_subscription/",
		map[string]any{"observable_object_type": typ}).object(t)
	q := w.call(t, "POST", "/api/event-subscriptions/"+s["uuid"].(string)+"/create_queue/",
		map[string]any{"offering_uuid": offeringID, "object_type": typ})
	wantStatus(t, q, 201)
	return s["uuid"].(string), q.object(t)["queue_name"].(string)
}

func TestEventsArePublishedToDeclaredQueues(t *testing.T) {
	broker := stompsim.New(stompsim.Options{})
	w := newWorld(t, Options{Broker: broker})
	_, orders := subscribe(t, w, "order")
	_, roles := subscribe(t, w, "user_role")
	vhost := w.sim.EventSubscriptions()[0].Queues[0].VHost

	o := w.sim.AddOrder(Order{Type: OrderCreate, OfferingUUID: offeringID, ProjectUUID: projectID, Attributes: map[string]any{"name": "x"}})
	wantStatus(t, w.call(t, "POST", "/api/marketplace-orders/"+o.UUID+"/approve_by_provider/", map[string]any{}), 200)
	w.sim.AddProjectMember(projectID, w.users[2].UUID, "PROJECT.MEMBER")
	w.sim.RemoveProjectMember(projectID, w.users[2].UUID)

	if d := broker.Depth(vhost, orders); d != 2 {
		t.Errorf("order queue holds %d messages, want 2 (pending-provider, executing)", d)
	}
	if d := broker.Depth(vhost, roles); d != 2 {
		t.Errorf("role queue holds %d messages, want 2 (granted, revoked)", d)
	}
	var states []any
	var granted []any
	for _, ev := range w.sim.Published() {
		if ev.Err != nil {
			t.Errorf("publish failed: %v", ev.Err)
		}
		switch ev.ObjectType {
		case "order":
			if ev.Body["order_uuid"] != o.UUID {
				t.Errorf("order event %v", ev.Body)
			}
			states = append(states, ev.Body["order_state"])
		case "user_role":
			granted = append(granted, ev.Body["granted"])
		}
	}
	if b, _ := json.Marshal([]any{states, granted}); string(b) != `[["pending-provider","executing"],[true,false]]` {
		t.Errorf("published %s", b)
	}
	w.sim.AssertNoViolations(t)
}

func TestCreateQueueFailsWhenTheBrokerIsDown(t *testing.T) {
	broker := stompsim.New(stompsim.Options{})
	w := newWorld(t, Options{Broker: broker})
	id := w.call(t, "POST", "/api/marketplace-site-agent-identities/", identityBody("agent-x", "1")).object(t)["uuid"].(string)
	s := w.call(t, "POST", "/api/marketplace-site-agent-identities/"+id+"/register_event_subscription/",
		map[string]any{"observable_object_type": "order"}).object(t)
	broker.SetDown(true)
	q := w.call(t, "POST", "/api/event-subscriptions/"+s["uuid"].(string)+"/create_queue/",
		map[string]any{"offering_uuid": offeringID, "object_type": "order"})
	wantStatus(t, q, 400)
	if subs := w.sim.EventSubscriptions(); len(subs[0].Queues) != 0 {
		t.Errorf("queue recorded although the broker refused it")
	}
	broker.SetDown(false)
	w.sim.AddOrder(Order{Type: OrderCreate, OfferingUUID: offeringID, ProjectUUID: projectID})
	if n := len(w.sim.Published()); n != 0 {
		t.Errorf("%d events published to a queue that does not exist", n)
	}
}
