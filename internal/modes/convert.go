package modes

import (
	"strings"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/usage"
	wc "github.com/waldur/site-agent/internal/waldurclient"
)

// toBackend translates a Waldur resource into the backend's view: limits in backend units.
func toBackend(r wc.Resource, comps backends.Components) backends.Resource {
	return backends.Resource{
		UUID:         hex(r.UUID),
		Name:         r.Name,
		Slug:         r.Slug,
		BackendID:    r.BackendID,
		ProjectUUID:  hex(r.ProjectUUID),
		ProjectSlug:  r.ProjectSlug,
		ProjectName:  r.ProjectName,
		CustomerUUID: hex(r.CustomerUUID),
		CustomerSlug: r.CustomerSlug,
		CustomerName: r.CustomerName,
		Limits:       usage.LimitsToBackend(backends.Quantities(r.Limits), comps),
		Attributes:   r.Attributes,
	}
}

// withOrder fills in what an order knows better than its resource (slugs may be missing from
// older resource records) and applies the order's limits when it has any.
func withOrder(res backends.Resource, o wc.Order, comps backends.Components) backends.Resource {
	if res.ProjectSlug == "" {
		res.ProjectSlug = o.ProjectSlug
	}
	if res.CustomerSlug == "" {
		res.CustomerSlug = o.CustomerSlug
	}
	if res.ProjectName == "" {
		res.ProjectName = o.ProjectName
	}
	if res.CustomerName == "" {
		res.CustomerName = o.CustomerName
	}
	if len(o.Limits) > 0 {
		res.Limits = usage.LimitsToBackend(backends.Quantities(o.Limits), comps)
	}
	if opts, ok := o.Attributes["new_options"].(map[string]any); ok && o.Type == wc.OrderUpdate {
		// An Update order made by update_options carries the changed resource options (Waldur
		// merges them into the resource's once the order is done); the backend sees them as
		// attributes["new_options"].
		attrs := make(map[string]any, len(res.Attributes)+1)
		for k, v := range res.Attributes {
			attrs[k] = v
		}
		attrs["new_options"] = opts
		res.Attributes = attrs
	}
	return res
}

// hex normalises a UUID to 32 lower-case hex digits.
func hex(uuid string) string {
	return strings.ToLower(strings.ReplaceAll(uuid, "-", ""))
}
