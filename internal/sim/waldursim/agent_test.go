package waldursim

import (
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func identityBody(name, version string) map[string]any {
	return map[string]any{
		"offering": offeringID, "name": name, "version": version,
		"last_restarted": "2025-03-15T11:00:00+00:00", "config_file_path": "", "config_file_content": "",
		"dependencies": []any{map[string]any{"package": "site-agent", "version": version}},
	}
}

func TestAgentIdentityLifecycle(t *testing.T) {
	w := newWorld(t, Options{})
	name := "agent-" + offeringID
	if got := w.call(t, "GET", "/api/marketplace-site-agent-identities/?name="+name, nil).list(t); len(got) != 0 {
		t.Fatalf("identities before registration: %v", got)
	}
	created := w.call(t, "POST", "/api/marketplace-site-agent-identities/", identityBody(name, "1.0.0"))
	wantStatus(t, created, 201)
	id := created.object(t)["uuid"].(string)
	wantStatus(t, w.call(t, "POST", "/api/marketplace-site-agent-identities/", identityBody(name, "1.0.0")), 400)
	wantStatus(t, w.call(t, "PUT", "/api/marketplace-site-agent-identities/"+id+"/", identityBody(name, "1.1.0")), 200)
	bad := identityBody(name, "1")
	bad["offering"] = planID
	wantStatus(t, w.call(t, "PUT", "/api/marketplace-site-agent-identities/"+id+"/", bad), 400)

	svcURL := "/api/marketplace-site-agent-identities/" + id + "/register_service/"
	first := w.call(t, "POST", svcURL, map[string]any{"name": "order_process", "mode": "order_process"})
	again := w.call(t, "POST", svcURL, map[string]any{"name": "order_process", "mode": "order_process"})
	wantStatus(t, first, 201)
	wantStatus(t, again, 200)
	svc := first.object(t)["uuid"].(string)
	if again.object(t)["uuid"] != svc {
		t.Error("register_service is not idempotent by name")
	}
	procURL := "/api/marketplace-site-agent-services/" + svc + "/register_processor/"
	proc := map[string]any{"name": "OfferingOrderProcessor", "backend_type": "inmemory", "backend_version": "1"}
	wantStatus(t, w.call(t, "POST", procURL, proc), 201)
	wantStatus(t, w.call(t, "POST", procURL, proc), 200)
	wantStatus(t, w.call(t, "POST", "/api/marketplace-site-agent-services/"+planID+"/register_processor/", proc), 404)

	listed := w.call(t, "GET", "/api/marketplace-site-agent-identities/?name="+name, nil).list(t)
	if len(listed) != 1 || listed[0]["version"] != "1.1.0" || len(listed[0]["services"].([]any)) != 1 {
		t.Errorf("listed %v", listed)
	}
	got := w.sim.Identities()
	want := []Service{{UUID: svc, Name: "order_process", Mode: "order_process", State: "Active", Processors: []string{"OfferingOrderProcessor"}}}
	if len(got) != 1 || got[0].Version != "1.1.0" {
		t.Fatalf("identities %+v", got)
	}
	if diff := cmp.Diff(want, got[0].Services); diff != "" {
		t.Errorf("services (-want +got):\n%s", diff)
	}
	w.sim.AssertNoViolations(t)
}

func TestEventSubscriptions(t *testing.T) {
	w := newWorld(t, Options{})
	id := w.call(t, "POST", "/api/marketplace-site-agent-identities/", identityBody("agent-x", "1")).object(t)["uuid"].(string)
	regURL := "/api/marketplace-site-agent-identities/" + id + "/register_event_subscription/"
	r := w.call(t, "POST", regURL, map[string]any{"observable_object_type": "order", "description": "orders"})
	wantStatus(t, r, 201)
	sub := r.object(t)
	if sub["user_uuid"] == nil || sub["user_username"] != "site-agent" {
		t.Errorf("subscription %v", sub)
	}
	wantStatus(t, w.call(t, "POST", regURL, map[string]any{"observable_object_type": "offering_resources_sync"}), 400)

	subUUID := sub["uuid"].(string)
	q := w.call(t, "POST", "/api/event-subscriptions/"+subUUID+"/create_queue/", map[string]any{"offering_uuid": offeringID, "object_type": "order"})
	wantStatus(t, q, 201)
	queue := q.object(t)
	wantName := "subscription_" + subUUID + "_offering_" + offeringID + "_order"
	if queue["queue_name"] != wantName || queue["vhost"] != sub["user_uuid"] {
		t.Errorf("queue %v, want name %s", queue, wantName)
	}
	wantStatus(t, w.call(t, "POST", "/api/event-subscriptions/"+subUUID+"/create_queue/", map[string]any{"offering_uuid": offeringID, "object_type": "order"}), 200)
	if subs := w.sim.EventSubscriptions(); len(subs) != 1 || len(subs[0].Queues) != 1 {
		t.Errorf("subscriptions %+v", subs)
	}
	wantStatus(t, w.call(t, "DELETE", "/api/event-subscriptions/"+subUUID+"/", nil), 204)
	wantStatus(t, w.call(t, "DELETE", "/api/event-subscriptions/"+subUUID+"/", nil), 404)
	if v := w.sim.Violations(); len(v) != 1 { // the 8.0.5 enum lacks offering_resources_sync
		t.Errorf("violations %q, want exactly the enum one", v)
	}
}

func TestServeAndConcurrentUse(t *testing.T) {
	sim := New(Options{})
	cust := sim.AddCustomer(Customer{Name: "C"})
	sim.AddOffering(Offering{UUID: offeringID, Name: "O", CustomerUUID: cust.UUID})
	sim.AddProject(Project{UUID: projectID, Name: "P", CustomerUUID: cust.UUID})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sim.Serve(l) }()
	base := "http://" + l.Addr().String()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				o := sim.AddOrder(Order{OfferingUUID: offeringID, ProjectUUID: projectID, ResourceName: "r"})
				r := doRequest(t, http.DefaultClient, base, "POST", "/api/marketplace-orders/"+o.UUID+"/approve_by_provider/", "Token test-token", nil)
				if r.status != 200 {
					t.Errorf("worker %d: status %d", i, r.status)
				}
				doRequest(t, http.DefaultClient, base, "GET", "/api/marketplace-orders/?page_size=5", "Token test-token", nil)
				_ = sim.Orders()
			}
		}()
	}
	wg.Wait()
	if n := sim.Calls()["marketplace_orders_approve_by_provider"]; n != 80 || sim.TotalCalls() != 160 {
		t.Errorf("calls %v", sim.Calls())
	}
	sim.ResetCalls()
	if sim.TotalCalls() != 0 {
		t.Error("ResetCalls did not reset")
	}
	l.Close()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	sim.AssertNoViolations(t)
}
