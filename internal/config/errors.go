package config

import (
	"fmt"
	"strings"
)

// Error is an invalid configuration: Key is the full path of the offending key, e.g.
// `offerings[0].waldur_api_url`, and Offering names the offering when there is one.
type Error struct {
	Path     string
	Offering string
	Key      string
	Problem  string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("invalid configuration")
	if e.Path != "" {
		fmt.Fprintf(&b, " in %s", e.Path)
	}
	b.WriteString(": ")
	b.WriteString(e.Detail())
	return b.String()
}

// Detail is the problem without the file: `offering "HPC" (offerings[0]): offerings[0].key: problem`.
func (e *Error) Detail() string {
	var b strings.Builder
	if e.Offering != "" {
		b.WriteString(e.Offering + ": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Problem)
	return b.String()
}

// Errors is every problem found in one configuration, in the order of the file: Load and Parse
// return it, never empty, so that an operator sees them all at once. errors.As finds each
// *Error in it.
type Errors []*Error

// Error is the one problem's line, or a line naming the file and the number of problems
// followed by one indented line each.
func (es Errors) Error() string {
	if len(es) == 1 {
		return es[0].Error()
	}
	var b strings.Builder
	b.WriteString("invalid configuration")
	if len(es) > 0 && es[0].Path != "" {
		fmt.Fprintf(&b, " in %s", es[0].Path)
	}
	fmt.Fprintf(&b, ": %d problems", len(es))
	for _, e := range es {
		b.WriteString("\n  " + e.Detail())
	}
	return b.String()
}

// Unwrap lets errors.As and errors.Is see every problem.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// withPath sets the file of every problem that names none.
func (es Errors) withPath(path string) Errors {
	for _, e := range es {
		if e.Path == "" {
			e.Path = path
		}
	}
	return es
}

func offeringLabel(i int, name string) string {
	if name == "" {
		return fmt.Sprintf("offerings[%d]", i)
	}
	return fmt.Sprintf("offering %q (offerings[%d])", name, i)
}
