package waldursim

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPagination(t *testing.T) {
	w := newWorld(t, Options{})
	for i := range 25 {
		w.sim.AddResource(Resource{Name: fmt.Sprintf("r%02d", i), OfferingUUID: offeringID, ProjectUUID: projectID})
	}
	// 26 resources in total with the world's one.
	base := w.srv.URL + "/api/marketplace-provider-resources/"
	tests := []struct {
		name, query string
		wantStatus  int
		wantItems   int
		wantLinks   []string
	}{
		{"default page size", "", 200, 10, []string{
			`<` + base + `>; rel="first"`, `<` + base + `?page=2>; rel="next"`, `<` + base + `?page=3>; rel="last"`}},
		{"middle page keeps other params sorted", "?state=OK&page=2&page_size=10", 200, 10, []string{
			`<` + base + `?page_size=10&state=OK>; rel="first"`, `<` + base + `?page_size=10&state=OK>; rel="prev"`,
			`<` + base + `?page=3&page_size=10&state=OK>; rel="next"`, `<` + base + `?page=3&page_size=10&state=OK>; rel="last"`}},
		{"last page", "?page=3&page_size=10", 200, 6, []string{
			`<` + base + `?page_size=10>; rel="first"`, `<` + base + `?page=2&page_size=10>; rel="prev"`,
			`<` + base + `?page=3&page_size=10>; rel="last"`}},
		{"everything on one page", "?page_size=100", 200, 26, []string{
			`<` + base + `?page_size=100>; rel="first"`, `<` + base + `?page_size=100>; rel="last"`}},
		{"page size capped at 300", "?page_size=1000", 200, 26, nil},
		{"zero page size falls back to default", "?page_size=0", 200, 10, nil},
		{"page beyond the end", "?page=4", 404, 0, nil},
		{"page zero", "?page=0", 404, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := w.call(t, "GET", "/api/marketplace-provider-resources/"+tt.query, nil)
			wantStatus(t, r, tt.wantStatus)
			if tt.wantStatus != 200 {
				if r.object(t)["detail"] != "Invalid page." {
					t.Errorf("body %s", r.raw)
				}
				return
			}
			if n := len(r.list(t)); n != tt.wantItems {
				t.Errorf("%d items, want %d", n, tt.wantItems)
			}
			if got := r.header.Get("X-Result-Count"); got != "26" {
				t.Errorf("X-Result-Count %q, want 26", got)
			}
			if tt.wantLinks != nil {
				if diff := cmp.Diff(tt.wantLinks, strings.Split(r.header.Get("Link"), ", ")); diff != "" {
					t.Errorf("Link (-want +got):\n%s", diff)
				}
			}
		})
	}
	w.sim.AssertNoViolations(t)
}

func TestFollowingNextVisitsEveryItemOnce(t *testing.T) {
	w := newWorld(t, Options{})
	for i := range 25 {
		w.sim.AddResource(Resource{Name: fmt.Sprintf("r%02d", i), OfferingUUID: offeringID, ProjectUUID: projectID})
	}
	seen := map[string]bool{}
	path := "/api/marketplace-provider-resources/?page_size=7"
	for pages := 0; path != ""; pages++ {
		r := w.call(t, "GET", path, nil)
		for _, id := range uuids(r.list(t)) {
			if seen[id] {
				t.Fatalf("%s seen twice", id)
			}
			seen[id] = true
		}
		path = ""
		for _, l := range strings.Split(r.header.Get("Link"), ", ") {
			if strings.HasSuffix(l, `rel="next"`) {
				path = strings.TrimPrefix(strings.TrimSuffix(l, `>; rel="next"`), "<"+w.srv.URL)
			}
		}
		if pages > 10 {
			t.Fatal("pagination does not end")
		}
	}
	if len(seen) != 26 {
		t.Errorf("visited %d items, want 26", len(seen))
	}
	w.sim.AssertNoViolations(t)
}

func TestFieldSelection(t *testing.T) {
	w := newWorld(t, Options{})
	tests := []struct {
		name, path string
		want       []string // keys of each object
	}{
		{"retrieve", "/api/marketplace-provider-offerings/" + offeringID + "/?field=components&field=customer_uuid&field=plugin_options&field=partitions",
			[]string{"components", "customer_uuid", "partitions", "plugin_options"}},
		{"list", "/api/marketplace-provider-resources/?field=uuid&field=backend_id&field=limits", []string{"backend_id", "limits", "uuid"}},
		{"users/me", "/api/users/me/?field=uuid", []string{"uuid"}},
		{"service providers", "/api/marketplace-service-providers/?field=uuid", []string{"uuid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := w.call(t, "GET", tt.path, nil)
			wantStatus(t, r, 200)
			var objects []map[string]any
			if strings.Contains(tt.name, "list") || strings.Contains(tt.name, "providers") {
				objects = r.list(t)
			} else {
				objects = []map[string]any{r.object(t)}
			}
			if len(objects) == 0 {
				t.Fatal("no objects")
			}
			for _, o := range objects {
				var keys []string
				for k := range o {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				if diff := cmp.Diff(tt.want, keys); diff != "" {
					t.Errorf("keys (-want +got):\n%s", diff)
				}
			}
		})
	}
	w.sim.AssertNoViolations(t)
}

func TestFilters(t *testing.T) {
	w := newWorld(t, Options{})
	other := w.sim.AddOffering(Offering{Name: "Other", CustomerUUID: w.offering.CustomerUUID})
	project2 := w.sim.AddProject(Project{Name: "Second", CustomerUUID: w.project.CustomerUUID})
	erred := w.sim.AddResource(Resource{Name: "E", OfferingUUID: offeringID, ProjectUUID: project2.UUID, State: ResourceErred, BackendID: "b-e"})
	foreign := w.sim.AddResource(Resource{Name: "F", OfferingUUID: other.UUID, ProjectUUID: projectID, BackendID: "b-f"})
	pending := w.sim.AddOrder(Order{Type: OrderUpdate, ResourceUUID: w.resource.UUID})
	doomed := w.sim.AddResource(Resource{Name: "D", OfferingUUID: offeringID, ProjectUUID: projectID})
	executing := w.sim.AddOrder(Order{Type: OrderTerminate, ResourceUUID: doomed.UUID, State: OrderExecuting})
	w.sim.AddOrder(Order{Type: OrderUpdate, ResourceUUID: w.resource.UUID, State: OrderDone})
	w.sim.AddOrder(Order{Type: OrderUpdate, ResourceUUID: foreign.UUID})
	restricted := w.sim.AddOfferingUser(OfferingUser{OfferingUUID: offeringID, UserUUID: w.users[2].UUID, Username: "carol", IsRestricted: true})
	w.sim.AddOfferingUser(OfferingUser{OfferingUUID: other.UUID, UserUUID: w.users[0].UUID, Username: "zed"})

	tests := []struct {
		name, path string
		want       []string
	}{
		{"orders by offering and states, newest first", "/api/marketplace-orders/?offering_uuid=" + offeringID + "&state=pending-provider&state=executing",
			[]string{executing.UUID, pending.UUID}},
		{"orders by type", "/api/marketplace-orders/?type=Terminate", []string{executing.UUID}},
		{"resources by offering and states", "/api/marketplace-provider-resources/?offering_uuid=" + offeringID + "&state=OK&state=Erred",
			[]string{w.resource.UUID, erred.UUID}},
		{"resources by project", "/api/marketplace-provider-resources/?project_uuid=" + project2.UUID, []string{erred.UUID}},
		{"executing termination made its resource Terminating", "/api/marketplace-provider-resources/?state=Terminating", []string{doomed.UUID}},
		{"resources by backend id", "/api/marketplace-provider-resources/?backend_id=b-f", []string{foreign.UUID}},
		{"resources by two offerings", "/api/marketplace-provider-resources/?offering_uuid=" + offeringID + "," + other.UUID + "&state=Erred&state=OK",
			[]string{w.resource.UUID, erred.UUID, foreign.UUID}},
		{"offering users not restricted, by username", "/api/marketplace-offering-users/?offering_uuid=" + offeringID + "&is_restricted=false",
			[]string{w.ous[0].UUID, w.ous[1].UUID}},
		{"offering users restricted", "/api/marketplace-offering-users/?is_restricted=true", []string{restricted.UUID}},
		{"offering users by state", "/api/marketplace-offering-users/?state=Requested&state=Creating", []string{w.ous[1].UUID}},
		{"offering users by user", "/api/marketplace-offering-users/?user_uuid=" + w.users[0].UUID + "&offering_uuid=" + offeringID,
			[]string{w.ous[0].UUID}},
		{"service providers by customer", "/api/marketplace-service-providers/?customer_uuid=" + w.offering.CustomerUUID, []string{w.provider.UUID}},
		{"service providers by other customer", "/api/marketplace-service-providers/?customer_uuid=" + w.project.CustomerUUID, nil},
		{"projects by slug", "/api/projects/?slug=second&field=uuid", []string{project2.UUID}},
		{"provider projects by uuid query", "/api/marketplace-service-providers/" + w.provider.UUID + "/projects/?query=" + project2.UUID,
			[]string{project2.UUID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := w.call(t, "GET", tt.path, nil)
			wantStatus(t, r, 200)
			got := uuids(r.list(t))
			if len(got) == 0 {
				got = nil
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	w.sim.AssertNoViolations(t)
}

func TestServiceProviderKeysAndAccounts(t *testing.T) {
	w := newWorld(t, Options{})
	key := w.sim.AddSSHKey(SSHKey{UserUUID: w.users[0].UUID, Name: "laptop",
		PublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGv0kGx7gqgYq5h3Zb1Ktb0k4mYb0V8kZ8x2C1s4xYx0 alice@laptop"})
	w.sim.AddSSHKey(SSHKey{UserUUID: w.users[2].UUID, Name: "outsider", PublicKey: "ssh-rsa AAAA"})
	keys := w.call(t, "GET", "/api/marketplace-service-providers/"+w.provider.UUID+"/keys/", nil).list(t)
	if len(keys) != 1 || keys[0]["uuid"] != key.UUID || keys[0]["type"] != "ssh-ed25519" ||
		!strings.HasPrefix(keys[0]["fingerprint_sha256"].(string), "SHA256:") {
		t.Errorf("keys %v", keys)
	}
	w.sim.AddServiceAccount(ServiceAccount{ProjectUUID: projectID, Username: "svc1"})
	w.sim.AddCourseAccount(CourseAccount{ProjectUUID: projectID, Username: "course1", State: "Closed"})
	project2 := w.sim.AddProject(Project{Name: "No resources here", CustomerUUID: w.project.CustomerUUID})
	w.sim.AddServiceAccount(ServiceAccount{ProjectUUID: project2.UUID, Username: "svc2"})
	base := "/api/marketplace-provider-offerings/" + offeringID + "/"
	svc := w.call(t, "GET", base+"list_project_service_accounts/?project_uuid="+projectID, nil).list(t)
	course := w.call(t, "GET", base+"list_course_accounts/", nil).list(t)
	if len(svc) != 1 || svc[0]["username"] != "svc1" || svc[0]["state"] != "OK" {
		t.Errorf("service accounts %v", svc)
	}
	if len(course) != 1 || course[0]["username"] != "course1" || course[0]["state"] != "Closed" {
		t.Errorf("course accounts %v", course)
	}
	w.sim.AssertNoViolations(t)
}
