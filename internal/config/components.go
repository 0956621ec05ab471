package config

import (
	"sort"

	"github.com/waldur/site-agent/internal/backends"
)

var accountingTypes = map[string]bool{"usage": true, "limit": true, "one": true}

// parseComponents reads backend_components. Every key of a component is kept in Settings so
// backends can read their own (type, k8s_resource, …); the core reads the generic ones.
func parseComponents(parent *reader, m map[string]any) (backends.Components, *Error) {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	var out backends.Components
	for _, name := range names {
		cm, ok := asMap(m[name])
		prefix := parent.prefix + "backend_components." + name
		if !ok {
			return nil, &Error{Offering: parent.label, Key: prefix, Problem: "expected a mapping, got " + describe(m[name])}
		}
		r := newReader(cm, prefix+".", parent.label)
		c := backends.Component{
			Name:           name,
			MeasuredUnit:   r.str("measured_unit", ""),
			AccountingType: r.str("accounting_type", ""),
			Label:          r.str("label", ""),
			UnitFactor:     r.float("unit_factor", 1),
			Limit:          r.optFloat("limit"),
			Settings:       cm,
		}
		if f := r.optFloat("unit_factor_reporting"); f != nil {
			c.UnitFactorReporting = *f
			if *f <= 0 {
				r.fail("unit_factor_reporting", "must be greater than zero")
			}
		}
		if r.err == nil {
			validateComponent(r, c)
		}
		if r.err != nil {
			return nil, r.err
		}
		out = append(out, c)
	}
	return out, nil
}

func validateComponent(r *reader, c backends.Component) {
	switch {
	case c.MeasuredUnit == "" && !r.has("measured_unit"):
		r.fail("measured_unit", "is required")
	case c.Label == "":
		r.fail("label", "is required")
	case !accountingTypes[c.AccountingType]:
		r.fail("accounting_type", "must be one of usage, limit, one; got %q", c.AccountingType)
	case c.UnitFactor <= 0:
		r.fail("unit_factor", "must be greater than zero, got %v", c.UnitFactor)
	}
}
