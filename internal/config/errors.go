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
	if e.Offering != "" {
		b.WriteString(e.Offering + ": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Problem)
	return b.String()
}

func offeringLabel(i int, name string) string {
	if name == "" {
		return fmt.Sprintf("offerings[%d]", i)
	}
	return fmt.Sprintf("offering %q (offerings[%d])", name, i)
}
