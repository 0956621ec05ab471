package waldursim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// testNow is the simulator clock in tests: mid-March 2025.
var testNow = time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)

const (
	offeringID = "e2ef0000000000000000000000000001"
	projectID  = "e2eb0000000000000000000000000001"
	planID     = "e2ed0000000000000000000000000001"
)

// world is a seeded simulator behind a real HTTP server.
type world struct {
	sim      *Server
	srv      *httptest.Server
	offering Offering
	project  Project
	provider ServiceProvider
	users    []User
	ous      []OfferingUser
	resource Resource // OK, with backend_id "alloc-1"
}

func newWorld(t *testing.T, opts Options) *world {
	t.Helper()
	if opts.Now == nil {
		opts.Now = func() time.Time { return testNow }
	}
	sim := New(opts)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	w := &world{sim: sim, srv: srv}
	cust := sim.AddCustomer(Customer{Name: "Provider Org"})
	consumer := sim.AddCustomer(Customer{Name: "Consumer Org"})
	w.provider = sim.AddServiceProvider(ServiceProvider{CustomerUUID: cust.UUID})
	limit := 100.0
	w.offering = sim.AddOffering(Offering{
		UUID: offeringID, Name: "HPC", CustomerUUID: cust.UUID,
		Components: []Component{
			{Type: "cpu", Name: "CPU", MeasuredUnit: "k-Hours", BillingType: "usage", LimitAmount: &limit},
			{Type: "ram", Name: "RAM", MeasuredUnit: "gb-Hours", BillingType: "limit"},
		},
		PluginOptions: map[string]any{"service_provider_can_create_offering_user": true},
		Plans:         []Plan{{UUID: planID, Name: "Default", Quotas: map[string]float64{"cpu": 10}}},
		Partitions:    []string{"batch"},
	})
	w.project = sim.AddProject(Project{UUID: projectID, Name: "E2E Project", CustomerUUID: consumer.UUID})
	for _, name := range []string{"alice", "bob", "carol"} {
		u := sim.AddUser(User{Username: name, FullName: strings.ToUpper(name[:1]) + name[1:] + " Tester", Email: name + "@example.com"})
		w.users = append(w.users, u)
	}
	sim.AddProjectMember(projectID, w.users[0].UUID, "PROJECT.ADMIN")
	sim.AddProjectMember(projectID, w.users[1].UUID, "PROJECT.MEMBER")
	w.ous = append(w.ous, sim.AddOfferingUser(OfferingUser{OfferingUUID: offeringID, UserUUID: w.users[0].UUID, Username: "alice01"}))
	w.ous = append(w.ous, sim.AddOfferingUser(OfferingUser{OfferingUUID: offeringID, UserUUID: w.users[1].UUID, State: OURequested}))
	w.resource = sim.AddResource(Resource{Name: "Alloc One", OfferingUUID: offeringID, ProjectUUID: projectID,
		PlanUUID: planID, BackendID: "alloc-1", Limits: map[string]float64{"cpu": 10}})
	return w
}

// reply is a decoded HTTP answer.
type reply struct {
	status int
	header http.Header
	raw    []byte
}

func (r reply) json(t *testing.T) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(r.raw, &v); err != nil {
		t.Fatalf("decode %q: %v", r.raw, err)
	}
	return v
}

func (r reply) object(t *testing.T) map[string]any {
	t.Helper()
	m, ok := r.json(t).(map[string]any)
	if !ok {
		t.Fatalf("want a JSON object, got %s", r.raw)
	}
	return m
}

func (r reply) list(t *testing.T) []map[string]any {
	t.Helper()
	arr, ok := r.json(t).([]any)
	if !ok {
		t.Fatalf("want a JSON array, got %s", r.raw)
	}
	out := make([]map[string]any, len(arr))
	for i, v := range arr {
		out[i], _ = v.(map[string]any)
	}
	return out
}

// call sends a request with the default token; body may be nil, a string (sent raw) or a value
// marshalled as JSON.
func (w *world) call(t *testing.T, method, path string, body any) reply {
	t.Helper()
	return w.callAuth(t, method, path, "Token test-token", body)
}

func (w *world) callAuth(t *testing.T, method, path, auth string, body any) reply {
	t.Helper()
	return doRequest(t, http.DefaultClient, w.srv.URL, method, path, auth, body)
}

func doRequest(t *testing.T, client *http.Client, base, method, path, auth string, body any) reply {
	t.Helper()
	var rdr io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rdr = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rdr = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, base+path, rdr)
	if err != nil {
		t.Fatal(err)
	}
	if rdr != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, raw: raw}
}

func wantStatus(t *testing.T, r reply, want int) {
	t.Helper()
	if r.status != want {
		t.Fatalf("status %d, want %d; body %s", r.status, want, r.raw)
	}
}

func uuids(items []map[string]any) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i], _ = it["uuid"].(string)
	}
	return out
}
