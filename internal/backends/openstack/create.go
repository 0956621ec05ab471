package openstack

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/clients/openstack/tenant"
	"github.com/waldur/site-agent/internal/failure"
)

// Create implements backends.Provisioner: the tenant creation chain. Each step finds its
// object in the project before creating it, so repeating Create after a failure anywhere
// completes the tenant without duplicates.
func (b *Backend) Create(ctx context.Context, req backends.CreateRequest) (backends.Info, error) {
	if _, err := b.quotas.toQuotas(req.Resource.Limits); err != nil {
		return backends.Info{}, err // before anything is made
	}
	c, err := b.conn(ctx)
	if err != nil {
		return backends.Info{}, err
	}
	p, n, created, err := b.tenantProject(ctx, c, req)
	if err != nil {
		return backends.Info{}, err
	}
	made := backends.Info{BackendID: p.ID} // returned with any later error, so the agent records it
	log := b.logger(ctx).With(zap.String("project", p.Name), zap.String("project_id", p.ID))
	if created {
		log.Info("openstack project created")
	}
	quotas, err := b.pushLimits(ctx, c, p, req.Resource.Limits, !created)
	if err != nil {
		return made, err
	}
	net, err := b.ensureNetworking(ctx, c, p.ID, n)
	if err != nil {
		return made, err
	}
	if b.settings.CreateTenantUser {
		if err := b.ensureTenantUser(ctx, c, p.ID, n); err != nil {
			return made, err
		}
	}
	if len(req.Members) > 0 {
		if err := b.addMembers(ctx, c, p.ID, req.Members); err != nil {
			return made, err
		}
	}
	// No Info.Limits: Waldur's limits are the customer's order and are never rewritten from
	// what OpenStack holds (whole GB, unlimited); the quotas are backend metadata instead.
	md := b.metadata(p.ID, n, net)
	if quotas != nil {
		md["quotas"] = b.quotas.describe(quotas)
	}
	return backends.Info{BackendID: p.ID, Metadata: md}, nil
}

// tenantProject returns the resource's project: the recorded one when it still exists and is
// ours (a half-made tenant is completed), else the one named after the proposed name, found or
// created. A vanished tenant thus comes back under a new Keystone id, which the core records.
func (b *Backend) tenantProject(ctx context.Context, c *clients, req backends.CreateRequest) (*projects.Project, names, bool, error) {
	if id := req.Resource.BackendID; id != "" {
		p, err := tenant.GetProject(ctx, c.identity, id)
		switch {
		case err == nil:
			if owner, _ := tagValue(p.Tags, ownerTagPrefix); owner == req.Resource.UUID {
				n, nerr := b.namesFor(strings.TrimPrefix(p.Name, b.settings.TenantPrefix))
				return p, n, false, nerr
			}
		case !errors.Is(err, failure.ErrNotFound):
			return nil, names{}, false, err
		}
	}
	n, err := b.namesFor(req.Name)
	if err != nil {
		return nil, names{}, false, err
	}
	p, created, err := c.ensureProject(ctx, n, req.Resource)
	return p, n, created, err
}

// Lookup implements backends.Provisioner.
func (b *Backend) Lookup(ctx context.Context, res backends.Resource) (backends.Info, error) {
	if res.BackendID == "" {
		return backends.Info{}, fmt.Errorf("openstack project with an empty id: %w", failure.ErrNotFound)
	}
	c, err := b.conn(ctx)
	if err != nil {
		return backends.Info{}, err
	}
	p, err := tenant.GetProject(ctx, c.identity, res.BackendID)
	if err != nil {
		return backends.Info{}, err
	}
	return backends.Info{BackendID: p.ID}, nil
}

// SetLimits implements backends.Provisioner: the new limits go to Nova, Cinder and Neutron
// after checking, for all three first, that none is below what the tenant already uses. A
// paused tenant keeps its zero quotas (Restore applies the new limits); a downscaled one gets
// the downscaled new limits.
func (b *Backend) SetLimits(ctx context.Context, res backends.Resource, limits backends.Quantities) error {
	if _, err := b.quotas.toQuotas(limits); err != nil {
		return err
	}
	c, p, err := b.ownedTenant(ctx, res)
	if err != nil {
		return err
	}
	_, err = b.pushLimits(ctx, c, p, limits, true)
	return err
}

// pushLimits applies limits as the project's status requires and returns the quotas OpenStack
// answered with (nil while paused or downscaled). checkUsage refuses limits below current
// usage before anything is written.
func (b *Backend) pushLimits(ctx context.Context, c *clients, p *projects.Project, limits backends.Quantities, checkUsage bool) (map[service]quotaValues, error) {
	want, err := b.quotas.toQuotas(limits)
	if err != nil {
		return nil, err
	}
	status, _ := tagValue(p.Tags, statusTagPrefix)
	switch status {
	case statusPaused:
		return nil, nil
	case statusDown:
		return nil, b.overrideQuotas(ctx, c, p.ID, scaled(want, *b.settings.DownscaleFactor))
	}
	if checkUsage {
		if err := b.checkUsage(ctx, c, p, want); err != nil {
			return nil, err
		}
	}
	got := map[service]quotaValues{}
	for _, svc := range b.quotas.services() {
		var err error
		if vals, ok := want[svc]; ok {
			got[svc], err = tenant.PutQuotas(ctx, c.services(), svc, p.ID, vals, false)
		} else {
			got[svc], err = tenant.GetQuotas(ctx, c.services(), svc, p.ID)
		}
		if err != nil {
			return nil, refusal(err)
		}
	}
	return got, nil
}

// checkUsage refuses quota values below usage, naming every offending component.
func (b *Backend) checkUsage(ctx context.Context, c *clients, p *projects.Project, want map[service]quotaValues) error {
	used := map[service]usageOf{}
	for svc := range want {
		_, u, err := tenant.GetUsage(ctx, c.services(), svc, p.ID)
		if err != nil {
			return err
		}
		used[svc] = u
	}
	if below := b.quotas.belowUsage(want, used); len(below) > 0 {
		return failure.Errorf("new limits are below what tenant %s already uses: %s; free resources first, nothing was changed",
			p.Name, strings.Join(below, ", "))
	}
	return nil
}

// overrideQuotas writes temporary quotas (pause, downscale, restore): Nova is forced below
// usage; Cinder never accepts that, so its values are raised to current usage.
func (b *Backend) overrideQuotas(ctx context.Context, c *clients, projectID string, want map[service]quotaValues) error {
	for _, svc := range b.quotas.services() {
		vals, ok := want[svc]
		if !ok {
			continue
		}
		if svc == cinder {
			_, used, err := tenant.GetUsage(ctx, c.services(), svc, projectID)
			if err != nil {
				return err
			}
			vals = clampToUsage(vals, used)
		}
		if _, err := tenant.PutQuotas(ctx, c.services(), svc, projectID, vals, true); err != nil {
			return err
		}
	}
	return nil
}

func clampToUsage(vals quotaValues, used usageOf) quotaValues {
	out := quotaValues{}
	for k, v := range vals {
		if v >= 0 && v < used[k] {
			v = used[k]
		}
		out[k] = v
	}
	return out
}

// refusal turns a service's 400 on a quota update into a user-facing error (its message
// explains the refusal, e.g. a limit below usage); other errors pass unchanged.
func refusal(err error) error {
	if failure.HasStatus(err, 400) {
		return failure.Wrap(err, "OpenStack refused the new quotas")
	}
	return err
}

// metadata is what Waldur shows on the resource (never a password).
func (b *Backend) metadata(projectID string, n names, net networkIDs) map[string]any {
	s := b.settings
	md := map[string]any{
		"auth_url": s.AuthURL, "project_id": projectID, "project_name": n.project, "domain": s.Domain,
		"external_network": s.ExternalNetwork, "network_id": net.network, "subnet_id": net.subnet,
		"subnet_cidr": s.SubnetCIDR, "router_id": net.router,
	}
	if s.RegionName != "" {
		md["region"] = s.RegionName
	}
	if s.CreateTenantUser {
		md["tenant_username"] = n.user
		md["credentials_path"] = b.credentialsPath(n.project)
	}
	for k, v := range md {
		if v == "" {
			delete(md, k)
		}
	}
	return md
}
