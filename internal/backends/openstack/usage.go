package openstack

import (
	"context"
	"fmt"
	"sync"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/clients/openstack/tenant"
)

// Usage implements backends.UsageReporter: what each tenant uses now (in use + reserved) of
// every mapped quota, from Nova's quota detail, Cinder's usage=true and Neutron's quota
// details, in backend units. Quota usage is a gauge with no history: past periods have no
// data. Tenants are measured concurrently (usage_concurrency); a tenant that fails is logged
// and left out, and the pass fails only when every tenant failed.
func (b *Backend) Usage(ctx context.Context, resources []backends.Resource, _ backends.Period, current bool) (map[string]backends.Usage, error) {
	out := map[string]backends.Usage{}
	if !current || len(resources) == 0 {
		return out, nil
	}
	c, err := b.conn(ctx)
	if err != nil {
		return nil, err
	}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		firstErr error
		failed   int
	)
	sem := make(chan struct{}, b.settings.UsageConcurrency)
	for _, res := range resources {
		if res.BackendID == "" {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(res backends.Resource) {
			defer func() { <-sem; wg.Done() }()
			total, err := b.tenantUsage(ctx, c, res.BackendID)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				if firstErr == nil {
					firstErr = err
				}
				b.logger(backends.ForResource(ctx, res.UUID)).Warn("tenant usage not read", zap.String("project_id", res.BackendID), zap.Error(err))
				return
			}
			out[res.BackendID] = backends.Usage{Total: total}
		}(res)
	}
	wg.Wait()
	if failed > 0 && len(out) == 0 {
		return nil, fmt.Errorf("usage of %d tenant(s) not read: %w", failed, firstErr)
	}
	return out, nil
}

func (b *Backend) tenantUsage(ctx context.Context, c *clients, projectID string) (backends.Quantities, error) {
	used := map[service]quotaValues{}
	for _, svc := range b.quotas.services() {
		_, u, err := tenant.GetUsage(ctx, c.services(), svc, projectID)
		if err != nil {
			return nil, err
		}
		used[svc] = quotaValues(u)
	}
	return b.quotas.fromQuotas(used), nil
}

// Metadata implements backends.MetadataReader: the tenant's endpoints and object ids as they
// are now (objects that went missing are left out) and the mapped quotas OpenStack holds
// ("quotas", by OpenStack quota name in OpenStack units, "unlimited" for -1; while paused or
// downscaled these are the temporary values). The backend deliberately implements no
// LimitsReader: Waldur's limits are the customer's order, never rewritten from OpenStack.
func (b *Backend) Metadata(ctx context.Context, res backends.Resource) (map[string]any, error) {
	c, p, err := b.ownedTenant(ctx, res)
	if err != nil {
		return nil, err
	}
	n := names{project: p.Name, network: p.Name + "-int-net", subnet: p.Name + "-sub-net", router: p.Name + "-router", user: p.Name}
	ids, err := b.findNetworking(ctx, c, p, n)
	if err != nil {
		return nil, err
	}
	md := b.metadata(p.ID, n, ids)
	got := map[service]quotaValues{}
	for _, svc := range b.quotas.services() {
		if got[svc], err = tenant.GetQuotas(ctx, c.services(), svc, p.ID); err != nil {
			return nil, err
		}
	}
	md["quotas"] = b.quotas.describe(got)
	return md, nil
}

// findNetworking looks up the tenant's network, subnet and router by name ("" when missing).
func (b *Backend) findNetworking(ctx context.Context, c *clients, p *projects.Project, n names) (networkIDs, error) {
	var ids networkIDs
	page, err := networks.List(c.network, networks.ListOpts{Name: n.network, ProjectID: p.ID}).AllPages(ctx)
	if err != nil {
		return ids, neutronErr("find network", err)
	}
	if nets, _ := networks.ExtractNetworks(page); len(nets) > 0 {
		ids.network = nets[0].ID
		page, err := subnets.List(c.network, subnets.ListOpts{Name: n.subnet, NetworkID: ids.network}).AllPages(ctx)
		if err != nil {
			return ids, neutronErr("find subnet", err)
		}
		if sns, _ := subnets.ExtractSubnets(page); len(sns) > 0 {
			ids.subnet = sns[0].ID
		}
	}
	page, err = routers.List(c.network, routers.ListOpts{Name: n.router, ProjectID: p.ID}).AllPages(ctx)
	if err != nil {
		return ids, neutronErr("find router", err)
	}
	if rs, _ := routers.ExtractRouters(page); len(rs) > 0 {
		ids.router = rs[0].ID
	}
	return ids, nil
}
