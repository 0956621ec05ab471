package waldursim

import (
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
)

// erratum corrects one property of a contract schema where real Waldur (Mastermind) answers
// differently from what its generated 8.0.5 contract declares. Each entry says why. The
// trimmed contract file itself stays exactly as generated; errata are applied after loading.
type erratum struct {
	schema, property, why string
	apply                 func(*openapi3.Schema)
}

var errata = []erratum{
	{
		schema: "ComponentUsage", property: "usage",
		why: "ComponentUsage.usage is a DecimalField(decimal_places=2); DRF renders it as a " +
			`string such as "100.00" (Mastermind's own tests assert that), not an integer`,
		apply: decimalString,
	},
	{
		schema: "ComponentUserUsage", property: "usage",
		why:   "ComponentUserUsage.usage is a DecimalField(decimal_places=2), rendered as a string",
		apply: decimalString,
	},
	{
		schema: "ComponentUserUsage", property: "user",
		why: "ComponentUserUsage.user is a nullable foreign key (per-user usage may be " +
			"reported without an offering user); DRF renders null",
		apply: func(s *openapi3.Schema) { s.Nullable = true },
	},
}

func decimalString(s *openapi3.Schema) {
	s.Type = &openapi3.Types{openapi3.TypeString}
	s.Format = "decimal"
}

// applyErrata patches doc in place; it fails if the contract no longer has a corrected
// property (the erratum would then be stale and must be reviewed).
func applyErrata(doc *openapi3.T) error {
	for _, e := range errata {
		ref := doc.Components.Schemas[e.schema]
		if ref == nil || ref.Value == nil {
			return fmt.Errorf("erratum for missing schema %s", e.schema)
		}
		prop := ref.Value.Properties[e.property]
		if prop == nil || prop.Value == nil {
			return fmt.Errorf("erratum for missing property %s.%s", e.schema, e.property)
		}
		// Copy so that a schema shared through $ref elsewhere is not changed by accident.
		patched := *prop.Value
		e.apply(&patched)
		ref.Value.Properties[e.property] = &openapi3.SchemaRef{Value: &patched}
	}
	return nil
}
