package waldursim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestUsersMeAndVersion(t *testing.T) {
	w := newWorld(t, Options{Staff: true})
	w.sim.SetCurrentUser(User{Username: "sp-bot", FullName: "SP Bot", Email: "bot@example.com"},
		Permission{RoleName: "OFFERING.MANAGER", ScopeType: "offering", ScopeUUID: offeringID, ScopeName: "HPC"})
	me := w.call(t, "GET", "/api/users/me/", nil).object(t)
	perms, _ := me["permissions"].([]any)
	if me["username"] != "sp-bot" || me["is_staff"] != true || len(perms) != 1 {
		t.Fatalf("me %v", me)
	}
	p, _ := perms[0].(map[string]any)
	if p["role_name"] != "OFFERING.MANAGER" || p["scope_uuid"] != offeringID || p["customer_uuid"] != w.offering.CustomerUUID {
		t.Errorf("permission %v", p)
	}
	if v := w.call(t, "GET", "/api/version/", nil).object(t); v["version"] != "8.0.5" {
		t.Errorf("version %v", v)
	}
	w.sim.AssertNoViolations(t)
}

func TestOfferingPlanAndAttributeConfig(t *testing.T) {
	w := newWorld(t, Options{})
	off := w.call(t, "GET", "/api/marketplace-provider-offerings/"+offeringID+"/?field=customer_uuid&field=plugin_options&field=partitions", nil).object(t)
	parts, _ := off["partitions"].([]any)
	first, _ := parts[0].(map[string]any)
	if off["customer_uuid"] != w.offering.CustomerUUID || first["partition_name"] != "batch" ||
		off["plugin_options"].(map[string]any)["service_provider_can_create_offering_user"] != true {
		t.Errorf("offering %v", off)
	}
	plan := w.call(t, "GET", "/api/marketplace-plans/"+planID+"/", nil).object(t)
	if diff := cmp.Diff(map[string]any{"cpu": 10.0}, plan["quotas"]); diff != "" || plan["resources_count"] != 1.0 {
		t.Errorf("plan %v %s", plan, diff)
	}
	wantStatus(t, w.call(t, "GET", "/api/marketplace-plans/"+offeringID+"/", nil), 404)
	cfg := w.call(t, "GET", "/api/marketplace-provider-offerings/"+offeringID+"/user-attribute-config/", nil).object(t)
	if diff := cmp.Diff([]any{"username", "full_name", "email"}, cfg["exposed_fields"]); diff != "" || cfg["is_default"] != true {
		t.Errorf("config %v %s", cfg, diff)
	}
	custom := w.sim.AddOffering(Offering{Name: "Custom", CustomerUUID: w.offering.CustomerUUID, ExposedFields: []string{"username", "phone_number"}})
	cfg = w.call(t, "GET", "/api/marketplace-provider-offerings/"+custom.UUID+"/user-attribute-config/", nil).object(t)
	if cfg["expose_phone_number"] != true || cfg["is_default"] != false {
		t.Errorf("custom config %v", cfg)
	}
	w.sim.AssertNoViolations(t)
}

func TestResourceFlagsAndRendering(t *testing.T) {
	w := newWorld(t, Options{})
	w.sim.SetResourceFlags(w.resource.UUID, true, false, true)
	got := w.call(t, "GET", "/api/marketplace-provider-resources/"+w.resource.UUID+"/", nil).object(t)
	for key, want := range map[string]any{
		"paused": true, "downscaled": false, "restrict_member_access": true, "backend_id": "alloc-1",
		"project_uuid": projectID, "project_slug": w.project.Slug, "customer_slug": "consumer-org",
		"offering_uuid": offeringID, "plan_uuid": planID, "state": ResourceOK, "slug": "alloc-one",
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v", key, got[key], want)
		}
	}
	filtered := w.call(t, "GET", "/api/marketplace-provider-resources/?paused=true&restrict_member_access=true", nil).list(t)
	if len(filtered) != 1 {
		t.Errorf("%d resources paused and restricted", len(filtered))
	}
	w.sim.AssertNoViolations(t)
}

func TestLatencyLogAndDump(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	w := newWorld(t, Options{Latency: 30 * time.Millisecond, Logf: func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(f, a...))
	}})
	start := time.Now()
	w.call(t, "GET", "/api/version/", nil)
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("request took %v, want at least the latency", d)
	}
	mu.Lock()
	if len(lines) != 1 || !strings.Contains(lines[0], "GET /api/version/ -> 200") {
		t.Errorf("log %q", lines)
	}
	mu.Unlock()
	var buf bytes.Buffer
	if err := w.sim.DumpJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var dump map[string]any
	if err := json.Unmarshal(buf.Bytes(), &dump); err != nil {
		t.Fatal(err)
	}
	if res, _ := dump["resources"].([]any); len(res) != 1 {
		t.Errorf("dump resources %v", dump["resources"])
	}
}

func TestSeedingMistakesPanic(t *testing.T) {
	sim := New(Options{})
	tests := map[string]func(){
		"unknown customer":     func() { sim.AddProject(Project{Name: "p", CustomerUUID: projectID}) },
		"malformed UUID":       func() { sim.AddCustomer(Customer{UUID: "nope"}) },
		"order w/o resource":   func() { sim.AddOrder(Order{Type: OrderUpdate, ResourceUUID: projectID}) },
		"unknown flags target": func() { sim.SetResourceFlags(projectID, true, true, true) },
	}
	for name, fn := range tests {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			fn()
		})
	}
}
