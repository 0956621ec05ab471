package tenant

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/limits"

	osc "github.com/waldur/site-agent/internal/clients/openstack"
)

// The three quota APIs differ only in paths, wrapper keys and the name of the "used" field,
// so quotas are read and written generically by key instead of through typed structs.

// Service is one OpenStack API holding quotas.
type Service int

// The services with quotas.
const (
	Nova Service = iota
	Cinder
	Neutron
)

var serviceNames = [...]string{Nova: "nova", Cinder: "cinder", Neutron: "neutron"}

func (s Service) String() string { return serviceNames[s] }

// Values are one service's quota values by API key (ram in MB, gigabytes in GB; -1 unlimited).
type Values map[string]int

// Usage is what a service reports as used per quota key (in use + reserved).
type Usage map[string]int

func (s Services) quotaClient(svc Service) *gophercloud.ServiceClient {
	switch svc {
	case Nova:
		return s.Compute
	case Cinder:
		return s.Volume
	}
	return s.Network
}

func quotaPath(svc Service, sc *gophercloud.ServiceClient, project string, usage bool) string {
	switch {
	case svc == Neutron && usage:
		return sc.ServiceURL("quotas", project, "details.json")
	case svc == Neutron:
		return sc.ServiceURL("quotas", project)
	case svc == Cinder && usage:
		return sc.ServiceURL("os-quota-sets", project) + "?usage=true"
	}
	return sc.ServiceURL("os-quota-sets", project)
}

func wrapperKey(svc Service) string {
	if svc == Neutron {
		return "quota"
	}
	return "quota_set"
}

// GetQuotas reads one service's quota limits for a project.
func GetQuotas(ctx context.Context, s Services, svc Service, project string) (Values, error) {
	sc := s.quotaClient(svc)
	var body map[string]map[string]json.RawMessage
	if _, err := sc.Get(ctx, quotaPath(svc, sc, project, false), &body, nil); err != nil {
		return nil, osc.Classify(svc.String(), fmt.Errorf("read %s quotas: %w", svc, err))
	}
	return intValues(body[wrapperKey(svc)]), nil
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

// GetUsage reads one service's limits and usage (in use + reserved) for a project.
func GetUsage(ctx context.Context, s Services, svc Service, project string) (Values, Usage, error) {
	if svc == Nova {
		return novaUsage(ctx, s.Compute, project)
	}
	sc := s.quotaClient(svc)
	var body map[string]map[string]json.RawMessage
	if _, err := sc.Get(ctx, quotaPath(svc, sc, project, true), &body, nil); err != nil {
		return nil, nil, osc.Classify(svc.String(), fmt.Errorf("read %s quota usage: %w", svc, err))
	}
	lim, used := Values{}, Usage{}
	for k, raw := range body[wrapperKey(svc)] {
		var d usageDetail
		if json.Unmarshal(raw, &d) != nil || (d.InUse == nil && d.Used == nil) {
			continue // "id" and other non-quota members
		}
		lim[k], used[k] = d.Limit, d.used()
	}
	return lim, used, nil
}

// novaUsage reads Nova's absolute limits of a project. They carry the same numbers as the
// quota-set detail for cores, ram and instances (counted quotas have no reservations) and cost
// a tenth of it: the detail call makes Nova check the project with Keystone first.
func novaUsage(ctx context.Context, compute *gophercloud.ServiceClient, project string) (Values, Usage, error) {
	l, err := limits.Get(ctx, compute, limits.GetOpts{TenantID: project}).Extract()
	if err != nil {
		return nil, nil, osc.Classify("nova", fmt.Errorf("read nova limits of project %s: %w", project, err))
	}
	a := l.Absolute
	return Values{"cores": a.MaxTotalCores, "ram": a.MaxTotalRAMSize, "instances": a.MaxTotalInstances},
		Usage{"cores": a.TotalCoresUsed, "ram": a.TotalRAMUsed, "instances": a.TotalInstancesUsed}, nil
}

// PutQuotas writes quota values and returns the service's limits after the change. force
// lets Nova accept limits below usage (the other services accept them or, Cinder, never do).
func PutQuotas(ctx context.Context, s Services, svc Service, project string, vals Values, force bool) (Values, error) {
	inner := map[string]any{}
	for k, v := range vals {
		inner[k] = v
	}
	if force && svc == Nova {
		inner["force"] = true
	}
	sc := s.quotaClient(svc)
	var body map[string]map[string]json.RawMessage
	_, err := sc.Put(ctx, quotaPath(svc, sc, project, false), map[string]any{wrapperKey(svc): inner}, &body,
		&gophercloud.RequestOpts{OkCodes: []int{http.StatusOK, http.StatusAccepted}})
	if err != nil {
		return nil, osc.Classify(svc.String(), fmt.Errorf("set %s quotas: %w", svc, err))
	}
	return intValues(body[wrapperKey(svc)]), nil
}

// DeleteQuotas drops a project's quota overrides (the service's defaults apply again).
func DeleteQuotas(ctx context.Context, s Services, svc Service, project string) error {
	sc := s.quotaClient(svc)
	_, err := sc.Delete(ctx, quotaPath(svc, sc, project, false), &gophercloud.RequestOpts{
		OkCodes: []int{http.StatusOK, http.StatusAccepted, http.StatusNoContent}})
	if err != nil && !osc.IsNotFound(err) {
		return osc.Classify(svc.String(), fmt.Errorf("reset %s quotas: %w", svc, err))
	}
	return nil
}

func intValues(in map[string]json.RawMessage) Values {
	out := Values{}
	for k, raw := range in {
		var n int
		if json.Unmarshal(raw, &n) == nil {
			out[k] = n
		}
	}
	return out
}
