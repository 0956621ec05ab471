package backendtest

import (
	"context"

	"github.com/waldur/site-agent/internal/backends"
)

// Checks runs every probe of d one after another and returns their lines in order, as a test
// reads them (the diagnostics command runs them at once).
func Checks(ctx context.Context, d backends.Diagnoser) []backends.Check {
	var out []backends.Check
	for _, p := range d.Probes() {
		out = append(out, p.Run(ctx)...)
	}
	return out
}
