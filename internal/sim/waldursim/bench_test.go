package waldursim

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// benchServer seeds 100 pending orders.
func benchServer(b *testing.B, opts Options) *Server {
	b.Helper()
	sim := New(opts)
	cust := sim.AddCustomer(Customer{Name: "C"})
	sim.AddOffering(Offering{UUID: offeringID, Name: "O", CustomerUUID: cust.UUID,
		Plans: []Plan{{UUID: planID, Name: "P"}}, Components: []Component{{Type: "cpu", Name: "CPU", BillingType: "usage"}}})
	sim.AddProject(Project{UUID: projectID, Name: "P", CustomerUUID: cust.UUID})
	for range 100 {
		sim.AddOrder(Order{OfferingUUID: offeringID, ProjectUUID: projectID, PlanUUID: planID, ResourceName: "r",
			Limits: map[string]float64{"cpu": 4}})
	}
	return sim
}

// BenchmarkOrdersList measures one GET of the order list (page_size=100 as the agent asks, and
// the default page of 10) through ServeHTTP, with and without contract validation.
func BenchmarkOrdersList(b *testing.B) {
	cases := []struct {
		name     string
		validate bool
		query    string
	}{
		{"validated/page100", true, "?offering_uuid=" + offeringID + "&state=pending-provider&state=executing&page_size=100"},
		{"unvalidated-responses/page100", false, "?offering_uuid=" + offeringID + "&state=pending-provider&state=executing&page_size=100"},
		{"validated/page10", true, "?offering_uuid=" + offeringID},
		{"unvalidated-responses/page10", false, "?offering_uuid=" + offeringID},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			sim := benchServer(b, Options{ValidateResponses: Bool(bc.validate)})
			req := httptest.NewRequest("GET", "http://sim.test/api/marketplace-orders/"+bc.query, nil)
			req.Header.Set("Authorization", "Token test-token")
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				sim.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
			if v := sim.Violations(); len(v) > 0 {
				b.Fatalf("violations: %v", v)
			}
		})
	}
}
