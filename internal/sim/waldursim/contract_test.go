package waldursim

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

func TestContractAndEndpointsMatch(t *testing.T) {
	c, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := loadContract(); again != c {
		t.Error("the contract is parsed more than once")
	}
	ids := c.operationIDs()
	added := 0
	for _, id := range ids {
		if c.ops[id].Since != "" {
			added++
		}
	}
	if len(ids)-added != 54 || added != 6 {
		t.Errorf("contract has %d operations and the addendum %d, want 54 and 6", len(ids)-added, added)
	}
	for _, id := range ids {
		ep, ok := endpoints[id]
		if !ok {
			t.Errorf("operation %s has no handler", id)
			continue
		}
		for _, f := range ep.filters {
			if _, declared := c.ops[id].Query[f]; !declared {
				t.Errorf("%s implements filter %q the contract does not declare", id, f)
			}
		}
	}
	for id := range endpoints {
		if _, ok := c.ops[id]; !ok {
			t.Errorf("handler for %s, which is not in the contract", id)
		}
	}
}

func TestErrataStillDiffer(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(contractYAML)
	if err != nil {
		t.Fatal(err)
	}
	patched, _ := loadContract()
	for _, e := range errata {
		t.Run(e.schema+"."+e.property, func(t *testing.T) {
			raw := doc.Components.Schemas[e.schema].Value.Properties[e.property].Value
			fixed := patched.doc.Components.Schemas[e.schema].Value.Properties[e.property].Value
			if raw.Type.Is(fixed.Type.Slice()[0]) && raw.Nullable == fixed.Nullable && raw.Format == fixed.Format {
				t.Errorf("erratum changes nothing: the contract may have been fixed; drop it (%s)", e.why)
			}
		})
	}
}

// respondDirect runs the response half of the pipeline for a crafted handler result.
func respondDirect(t *testing.T, s *Server, opID, rawQuery string, res result) {
	t.Helper()
	op := s.c.ops[opID]
	if op == nil {
		t.Fatalf("no operation %s", opID)
	}
	r := httptest.NewRequest(op.Method, "http://sim.test"+strings.ReplaceAll(op.Path, "{uuid}", offeringID)+"?"+rawQuery, nil)
	q, _ := url.ParseQuery(rawQuery)
	c := &call{op: op, query: q, base: "http://sim.test", fields: q["field"]}
	s.respond(httptest.NewRecorder(), r, op, c, res)
}

func TestResponseValidationCatchesSimulatorBugs(t *testing.T) {
	tests := []struct {
		name, op, query string
		res             result
		want            string // substring of the violation; "" = none
	}{
		{"conforming", "version_retrieve", "", ok(map[string]any{"version": "8.0.5"}), ""},
		{"wrong type", "version_retrieve", "", ok(map[string]any{"version": 5}), "response:"},
		{"missing required property", "version_retrieve", "", ok(map[string]any{"latest_version": "9"}), "response:"},
		{"undocumented status", "version_retrieve", "", created(map[string]any{"version": "8.0.5"}), "status 201 is not documented"},
		{"body where none is documented", "marketplace_orders_set_state_done", "", ok(map[string]any{"x": 1}), "has no body"},
		{"no body where one is documented", "marketplace_orders_approve_by_provider", "", noBody(http.StatusOK), "must have a JSON body"},
		{"enum violation in a list", "marketplace_orders_list", "", rendered(map[string]any{"state": "nearly-done"}), "response:"},
		{"requested field missing", "marketplace_provider_resources_list", "field=uuid&field=name",
			rendered(map[string]any{"uuid": offeringID}), `"name"`},
		{"requested field of wrong type", "marketplace_provider_resources_retrieve", "field=paused",
			ok(map[string]any{"paused": "no"}), "response:"},
		{"malformed UUID", "marketplace_provider_resources_retrieve", "", ok(map[string]any{"uuid": "nope"}), "response:"},
		{"errors are not validated", "version_retrieve", "", conflict("x"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Options{})
			respondDirect(t, s, tt.op, tt.query, tt.res)
			v := s.Violations()
			switch {
			case tt.want == "" && len(v) > 0:
				t.Errorf("unexpected violations %q", v)
			case tt.want != "" && (len(v) != 1 || !strings.Contains(v[0], tt.want)):
				t.Errorf("violations %q, want one containing %q", v, tt.want)
			}
		})
	}
	t.Run("disabled", func(t *testing.T) {
		s := New(Options{ValidateResponses: Bool(false)})
		respondDirect(t, s, "version_retrieve", "", ok(map[string]any{"version": 5}))
		s.AssertNoViolations(t)
	})
}

// rendered is a materialized list result of the given items.
func rendered(items ...map[string]any) result {
	return result{status: http.StatusOK, isList: true, count: len(items), list: items}
}
