package waldursim

import (
	"net/http"
	"strings"
	"testing"
)

func TestAuth(t *testing.T) {
	w := newWorld(t, Options{Token: "static", BearerTokens: []string{"jwt-1", "jwt-2"}})
	tests := []struct {
		name, auth string
		want       int
	}{
		{"missing header", "", http.StatusUnauthorized},
		{"wrong token", "Token nope", http.StatusUnauthorized},
		{"token without value", "Token ", http.StatusUnauthorized},
		{"bearer not configured", "Bearer static", http.StatusUnauthorized},
		{"lower-case scheme", "token static", http.StatusUnauthorized},
		{"static token", "Token static", http.StatusOK},
		{"bearer token", "Bearer jwt-2", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := w.callAuth(t, "GET", "/api/users/me/", tt.auth, nil)
			if r.status != tt.want {
				t.Fatalf("status %d, want %d (%s)", r.status, tt.want, r.raw)
			}
			if tt.want == http.StatusUnauthorized {
				if got := r.object(t)["detail"]; got != "Invalid token." {
					t.Errorf("detail %q, want DRF's %q", got, "Invalid token.")
				}
			}
		})
	}
	w.sim.AssertNoViolations(t) // failed authentication is the client's configuration, not a violation
}

func TestStrictnessViolations(t *testing.T) {
	order := "/api/marketplace-orders/"
	res := "/api/marketplace-provider-resources/"
	tests := []struct {
		name         string
		method, path string
		body         any
		want         int
		reason       string // substring of the recorded violation
	}{
		{"unknown path", "GET", "/api/marketplace-nope/", nil, 404, "unknown path"},
		{"missing trailing slash", "GET", "/api/version", nil, 404, "unknown path"},
		{"wrong method", "DELETE", "/api/version/", nil, 405, "method not allowed"},
		{"wrong method on templated path", "DELETE", order + offeringID + "/", nil, 405, "method not allowed"},
		{"undeclared query parameter", "GET", order + "?offering=x&ofering_uuid=" + offeringID, nil, 400, `"ofering_uuid" is not declared`},
		{"declared but unimplemented filter", "GET", order + "?o=created", nil, 400, "not implemented by the simulator"},
		{"enum value", "GET", order + "?state=pending", nil, 400, "request violates contract"},
		{"malformed uuid filter", "GET", order + "?offering_uuid=xyz", nil, 400, "request violates contract"},
		{"unknown field selection", "GET", order + "?field=nope", nil, 400, "request violates contract"},
		{"malformed uuid in path", "GET", order + "not-a-uuid/", nil, 404, "malformed UUID"},
		{"malformed JSON body", "POST", res + "{r}/set_limits/", `{"limits": `, 400, "request violates contract"},
		{"missing required field", "POST", res + "{r}/set_limits/", map[string]any{}, 400, "request violates contract"},
		{"wrong type in body", "POST", "/api/marketplace-component-usages/set_usage/",
			map[string]any{"usages": []any{map[string]any{"type": "cpu", "amount": 12.5}}}, 400, "request violates contract"},
		{"bad date-time", "POST", "/api/marketplace-component-usages/set_usage/",
			map[string]any{"date": "2025-03-01T00:00:00", "usages": []any{}}, 400, "request violates contract"},
		{"body on a body-less action", "POST", res + "{r}/set_as_ok/", map[string]any{"error_message": "x"}, 400, "request body not allowed"},
		{"misspelt body property", "POST", res + "{r}/set_backend_id/", map[string]any{"backendid": "x"}, 400, "/backendid"},
		{"undeclared nested property", "POST", "/api/marketplace-component-usages/set_usage/",
			map[string]any{"usages": []any{map[string]any{"type": "cpu", "amount": "1", "unit": "h"}}}, 400, "/usages/0/unit"},
		{"unsupported PATCH field", "PATCH", "/api/marketplace-offering-users/{ou}/",
			map[string]any{"user_uuid": projectID}, 400, "not supported by the simulator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, Options{})
			path := strings.NewReplacer("{r}", w.resource.UUID, "{ou}", w.ous[0].UUID).Replace(tt.path)
			r := w.call(t, tt.method, path, tt.body)
			if r.status != tt.want {
				t.Fatalf("status %d, want %d: %s", r.status, tt.want, r.raw)
			}
			v := w.sim.Violations()
			if len(v) != 1 || !strings.Contains(v[0], tt.reason) {
				t.Fatalf("violations %q, want one containing %q", v, tt.reason)
			}
			if !strings.HasPrefix(v[0], tt.method+" ") {
				t.Errorf("violation %q does not start with the method", v[0])
			}
			if tt.want == 400 && !strings.Contains(string(r.raw), "detail") {
				t.Errorf("400 body %s does not explain the problem", r.raw)
			}
		})
	}
}

func TestWrongContentTypeIsViolation(t *testing.T) {
	w := newWorld(t, Options{})
	req, err := http.NewRequest("POST", w.srv.URL+"/api/marketplace-provider-resources/"+w.resource.UUID+"/set_limits/",
		strings.NewReader(`{"limits": {"cpu": 1}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Token test-token")
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || len(w.sim.Violations()) != 1 {
		t.Fatalf("status %d, violations %q", resp.StatusCode, w.sim.Violations())
	}
}

func TestLenientWhereDjangoIsLenient(t *testing.T) {
	w := newWorld(t, Options{})
	dashed := offeringID[:8] + "-" + offeringID[8:12] + "-" + offeringID[12:16] + "-" + offeringID[16:20] + "-" + offeringID[20:]
	tests := []struct {
		name, method, path string
		body               any
		want               int
	}{
		{"empty JSON object on a body-less action", "POST", "/api/marketplace-provider-resources/" + w.resource.UUID + "/refresh_last_sync/", "{}", 200},
		{"dashed UUID in path", "GET", "/api/marketplace-provider-offerings/" + dashed + "/", nil, 200},
		{"upper-case UUID in path", "GET", "/api/marketplace-provider-offerings/" + strings.ToUpper(offeringID) + "/", nil, 200},
		{"dashed UUID filter", "GET", "/api/marketplace-provider-resources/?offering_uuid=" + dashed, nil, 200},
		{"unknown object is a plain 404", "GET", "/api/marketplace-orders/" + planID + "/", nil, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := w.call(t, tt.method, tt.path, tt.body)
			wantStatus(t, r, tt.want)
		})
	}
	w.sim.AssertNoViolations(t)
}
