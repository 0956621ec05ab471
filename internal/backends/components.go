package backends

import "sort"

// Component is one entry of an offering's backend_components.
type Component struct {
	Name           string // the key under backend_components, also the Waldur component type
	MeasuredUnit   string
	AccountingType string // usage, limit or one
	Label          string
	// UnitFactor converts Waldur units to backend units (backend = waldur × factor). Default 1.
	UnitFactor float64
	// UnitFactorReporting, when non-zero, converts reported usage instead of UnitFactor.
	UnitFactorReporting float64
	Limit               *float64
	// Settings holds every key of the component exactly as configured (including backend-specific
	// ones such as type or k8s_resource).
	Settings map[string]any
}

// String returns the setting key as a string ("" when absent or not a string).
func (c Component) String(key string) string {
	s, _ := c.Settings[key].(string)
	return s
}

// Components is an offering's component list, sorted by name.
type Components []Component

// Sorted returns the components ordered by name.
func (cs Components) Sorted() Components {
	out := append(Components(nil), cs...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Get returns the component with that name.
func (cs Components) Get(name string) (Component, bool) {
	for _, c := range cs {
		if c.Name == name {
			return c, true
		}
	}
	return Component{}, false
}

// Names lists component names in order.
func (cs Components) Names() []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}
