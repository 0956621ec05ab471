package openstack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/limits"
)

// The three quota APIs differ only in paths, wrapper keys and the name of the "used" field,
// so the backend reads and writes them generically by key instead of through typed structs.

func (c *clients) quotaClient(s service) *gophercloud.ServiceClient {
	switch s {
	case nova:
		return c.compute
	case cinder:
		return c.volume
	}
	return c.network
}

func quotaPath(s service, sc *gophercloud.ServiceClient, project string, usage bool) string {
	switch {
	case s == neutron && usage:
		return sc.ServiceURL("quotas", project, "details.json")
	case s == neutron:
		return sc.ServiceURL("quotas", project)
	case s == cinder && usage:
		return sc.ServiceURL("os-quota-sets", project) + "?usage=true"
	}
	return sc.ServiceURL("os-quota-sets", project)
}

func wrapperKey(s service) string {
	if s == neutron {
		return "quota"
	}
	return "quota_set"
}

// getQuotas reads one service's quota limits for a project.
func (c *clients) getQuotas(ctx context.Context, s service, project string) (quotaValues, error) {
	sc := c.quotaClient(s)
	var body map[string]map[string]json.RawMessage
	if _, err := sc.Get(ctx, quotaPath(s, sc, project, false), &body, nil); err != nil {
		return nil, classify(s.String(), fmt.Errorf("read %s quotas: %w", s, err))
	}
	return intValues(body[wrapperKey(s)]), nil
}

// usageDetail is one quota with its usage as the detail APIs report it.
type usageDetail struct {
	Limit    int  `json:"limit"`
	InUse    *int `json:"in_use"` // nova, cinder
	Used     *int `json:"used"`   // neutron
	Reserved int  `json:"reserved"`
}

func (d usageDetail) used() int {
	n := d.Reserved
	if d.InUse != nil {
		n += *d.InUse
	}
	if d.Used != nil {
		n += *d.Used
	}
	return n
}

// getUsage reads one service's limits and usage (in use + reserved) for a project.
func (c *clients) getUsage(ctx context.Context, s service, project string) (quotaValues, usageOf, error) {
	if s == nova {
		return c.novaUsage(ctx, project)
	}
	sc := c.quotaClient(s)
	var body map[string]map[string]json.RawMessage
	if _, err := sc.Get(ctx, quotaPath(s, sc, project, true), &body, nil); err != nil {
		return nil, nil, classify(s.String(), fmt.Errorf("read %s quota usage: %w", s, err))
	}
	limits, used := quotaValues{}, usageOf{}
	for k, raw := range body[wrapperKey(s)] {
		var d usageDetail
		if json.Unmarshal(raw, &d) != nil || (d.InUse == nil && d.Used == nil) {
			continue // "id" and other non-quota members
		}
		limits[k], used[k] = d.Limit, d.used()
	}
	return limits, used, nil
}

// novaUsage reads Nova's absolute limits of a project. They carry the same numbers as the
// quota-set detail for cores, ram and instances (counted quotas have no reservations) and cost
// a tenth of it: the detail call makes Nova check the project with Keystone first.
func (c *clients) novaUsage(ctx context.Context, project string) (quotaValues, usageOf, error) {
	l, err := limits.Get(ctx, c.compute, limits.GetOpts{TenantID: project}).Extract()
	if err != nil {
		return nil, nil, classify("nova", fmt.Errorf("read nova limits of project %s: %w", project, err))
	}
	a := l.Absolute
	return quotaValues{"cores": a.MaxTotalCores, "ram": a.MaxTotalRAMSize, "instances": a.MaxTotalInstances},
		usageOf{"cores": a.TotalCoresUsed, "ram": a.TotalRAMUsed, "instances": a.TotalInstancesUsed}, nil
}

// putQuotas writes quota values and returns the service's limits after the change. force
// lets Nova accept limits below usage (used while pausing; the other services accept them or,
// Cinder, never do).
func (c *clients) putQuotas(ctx context.Context, s service, project string, vals quotaValues, force bool) (quotaValues, error) {
	inner := map[string]any{}
	for k, v := range vals {
		inner[k] = v
	}
	if force && s == nova {
		inner["force"] = true
	}
	sc := c.quotaClient(s)
	var body map[string]map[string]json.RawMessage
	_, err := sc.Put(ctx, quotaPath(s, sc, project, false), map[string]any{wrapperKey(s): inner}, &body,
		&gophercloud.RequestOpts{OkCodes: []int{http.StatusOK, http.StatusAccepted}})
	if err != nil {
		return nil, classify(s.String(), fmt.Errorf("set %s quotas: %w", s, err))
	}
	return intValues(body[wrapperKey(s)]), nil
}

// deleteQuotas drops a project's quota overrides (the service's defaults apply again).
func (c *clients) deleteQuotas(ctx context.Context, s service, project string) error {
	sc := c.quotaClient(s)
	_, err := sc.Delete(ctx, quotaPath(s, sc, project, false), &gophercloud.RequestOpts{
		OkCodes: []int{http.StatusOK, http.StatusAccepted, http.StatusNoContent}})
	if err != nil && !isNotFound(err) {
		return classify(s.String(), fmt.Errorf("reset %s quotas: %w", s, err))
	}
	return nil
}

func intValues(in map[string]json.RawMessage) quotaValues {
	out := quotaValues{}
	for k, raw := range in {
		var n int
		if json.Unmarshal(raw, &n) == nil {
			out[k] = n
		}
	}
	return out
}
