package rancher

import (
	"fmt"
	"strings"

	"github.com/waldur/site-agent/internal/backends"
)

// extras are the settings added after the incumbent's: how bindings are kept clean, how a
// downscaled resource is limited, and the core's allocation_prefix (which the incumbent never
// put into Rancher project names).
type extras struct {
	pruneBindings bool    // remove_stale_bindings
	downscale     float64 // downscale_factor
	allocPrefix   string  // allocation_prefix, lower-cased: stripped from proposed names
}

func parseExtras(s Settings, in backends.Settings) (extras, error) {
	e := extras{pruneBindings: boolOr(s.RemoveStaleBindings, true), downscale: 0.5}
	if s.DownscaleFactor != nil {
		e.downscale = *s.DownscaleFactor
	}
	if e.downscale < 0 || e.downscale > 1 {
		return e, fmt.Errorf("backend_settings.downscale_factor: must be between 0 and 1, got %v", e.downscale)
	}
	if raw, ok := in["allocation_prefix"]; ok && raw != nil {
		p, ok := raw.(string)
		if !ok {
			return e, fmt.Errorf("backend_settings.allocation_prefix: must be a string, got %T", raw)
		}
		e.allocPrefix = strings.ToLower(p)
	}
	return e, nil
}
