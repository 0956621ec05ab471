package config

import (
	"sort"

	"github.com/waldur/site-agent/internal/backends"
)

var accountingTypes = map[string]bool{"usage": true, "limit": true, "one": true}

// componentBools are the component keys Waldur takes as booleans (the incumbent's
// BackendComponent declares them bool, so pydantic read yes/no there too).
var componentBools = []string{"is_boolean", "is_prepaid"}

// parseComponents reads backend_components. Every key of a component is kept in Settings so
// backends can read their own (type, k8s_resource, …); the core reads the generic ones.
// Problems of every component are recorded on parent.
func parseComponents(parent *reader, m map[string]any) backends.Components {
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
			parent.absorb(Errors{{Offering: parent.label, Key: prefix, Problem: "expected a mapping, got " + describe(m[name])}})
			continue
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
		for _, key := range componentBools { // sent to Waldur as booleans, however the file spells them
			if b := r.optBool(key); b != nil {
				cm[key] = *b
			}
		}
		if f := r.optFloat("unit_factor_reporting"); f != nil {
			c.UnitFactorReporting = *f
			if *f <= 0 {
				r.fail("unit_factor_reporting", "must be greater than zero")
			}
		}
		if !r.failed() {
			validateComponent(r, c)
		}
		parent.absorb(r.errs)
		out = append(out, c)
	}
	return out
}

func validateComponent(r *reader, c backends.Component) {
	if c.MeasuredUnit == "" && !r.has("measured_unit") {
		r.fail("measured_unit", "is required")
	}
	if c.Label == "" {
		r.fail("label", "is required")
	}
	if !accountingTypes[c.AccountingType] {
		r.fail("accounting_type", "must be one of usage, limit, one; got %q", c.AccountingType)
	}
	if c.UnitFactor <= 0 {
		r.fail("unit_factor", "must be greater than zero, got %v", c.UnitFactor)
	}
}
