package novainfra

import (
	"context"
	"fmt"
	"slices"

	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/clients/openstack/tenant"
	"github.com/waldur/site-agent/internal/failure"
)

// The cluster's own project (backend_settings.openstack.tenant: per_cluster).

// tagManaged marks the projects site-agent made for rke2 clusters.
const tagManaged = "site-agent-rke2"

// projectName is the cluster's project: a function of the resource UUID alone, so that a pass
// after a crash finds the project an earlier one made.
func projectName(c rke2.ClusterRef) string { return "rke2-" + c.UUID }

// ownerTag is the tag naming the cluster a project belongs to.
func ownerTag(c rke2.ClusterRef) string { return rke2.ClusterTag(c.UUID) }

// clusterConn is the connection the cluster's objects are made and found with: the
// management connection (tenant: shared), or one scoped to the cluster's own project. With
// create a missing project is made; without, a missing project is (nil, nil): nothing of the
// cluster exists.
func (in *Infra) clusterConn(ctx context.Context, c rke2.ClusterRef, create bool) (*conn, error) {
	admin, err := in.conn(ctx)
	if err != nil || !in.settings.OpenStack.PerCluster() {
		return admin, err
	}
	in.mu.Lock()
	cl := in.clusters[c.UUID]
	in.mu.Unlock()
	if cl != nil {
		return cl, nil
	}
	p, err := in.project(ctx, admin, c, create)
	if err != nil || p == nil {
		return nil, err
	}
	if err := tenant.Grant(ctx, admin.Identity, p.ID, admin.UserID, admin.roleID); err != nil {
		return nil, err
	}
	if err := in.setQuotas(ctx, admin, p.ID); err != nil {
		return nil, err
	}
	scoped := in.settings.OpenStack.Connection
	scoped.ProjectName = p.Name
	cl, err = in.connect(ctx, scoped)
	if err != nil {
		return nil, fmt.Errorf("openstack project %s of cluster %s: %w", p.Name, c.Name, err)
	}
	if cl.ProjectID != p.ID {
		return nil, failure.Errorf("openstack: a token for project %s is scoped to %s, not %s", p.Name, cl.ProjectID, p.ID)
	}
	cl.extNetID = admin.extNetID
	in.mu.Lock()
	in.clusters[c.UUID] = cl
	in.mu.Unlock()
	return cl, nil
}

// project finds the cluster's project by name (and makes it with create); one of that name
// that is not tagged for the cluster is refused.
func (in *Infra) project(ctx context.Context, admin *conn, c rke2.ClusterRef, create bool) (*projects.Project, error) {
	name := projectName(c)
	var p *projects.Project
	var err error
	made := false
	if create {
		p, made, err = tenant.EnsureProject(ctx, admin.Identity, projects.CreateOpts{Name: name, DomainID: admin.domainID,
			Description: fmt.Sprintf("site-agent rke2 cluster %s (Waldur resource %s)", c.Name, c.UUID),
			Tags:        []string{tagManaged, ownerTag(c)}})
	} else {
		p, err = tenant.FindProject(ctx, admin.Identity, admin.domainID, name)
	}
	if err != nil || p == nil {
		return nil, err
	}
	if !slices.Contains(p.Tags, ownerTag(c)) {
		return nil, fmt.Errorf("openstack project %s (%s) is not tagged %s; refusing to use it for cluster %s: %w",
			p.Name, p.ID, ownerTag(c), c.Name, failure.ErrDuplicate)
	}
	if made {
		backends.Log(ctx, in.log).Info("openstack project created", zap.String("cluster", c.Name), zap.String("project", p.Name), zap.String("project_id", p.ID))
	}
	return p, nil
}

// quotas are the project quotas the tenant maxima set (none when no maximum is set).
func (in *Infra) quotas() map[tenant.Service]tenant.Values {
	s := in.settings
	out := map[tenant.Service]tenant.Values{}
	if s.TenantMaxCPU > 0 {
		out[tenant.Nova] = tenant.Values{"cores": s.TenantMaxCPU}
	}
	if s.TenantMaxRAMGB > 0 {
		if out[tenant.Nova] == nil {
			out[tenant.Nova] = tenant.Values{}
		}
		out[tenant.Nova]["ram"] = s.TenantMaxRAMGB * 1024
	}
	if s.TenantMaxDiskGB > 0 {
		out[tenant.Cinder] = tenant.Values{"gigabytes": s.TenantMaxDiskGB}
	}
	return out
}

// setQuotas writes the cluster project's quotas: the tenant maxima as they are, and every
// other quota the largest order needs (headroom.go; cores, RAM and gigabytes too when they
// have no maximum) raised to that need where OpenStack's default is less, so that a project
// with the default 10 instances and 10 volumes does not stop a cluster the offering allows.
func (in *Infra) setQuotas(ctx context.Context, admin *conn, projectID string) error {
	svcs := tenant.ServicesOf(admin.Clients)
	want := in.quotas()
	if in.settings.ServerFlavorName != "" {
		need, _, err := in.largestOrder(ctx, admin)
		if err != nil {
			return err
		}
		for _, svc := range []tenant.Service{tenant.Nova, tenant.Cinder, tenant.Neutron} {
			cur, err := tenant.GetQuotas(ctx, svcs, svc, projectID)
			if err != nil {
				return err
			}
			for key, v := range need[svc] {
				if _, fixed := want[svc][key]; fixed || cur[key] < 0 || cur[key] >= v {
					continue
				}
				if want[svc] == nil {
					want[svc] = tenant.Values{}
				}
				want[svc][key] = v
			}
		}
	}
	for _, svc := range []tenant.Service{tenant.Nova, tenant.Cinder, tenant.Neutron} {
		if vals, ok := want[svc]; ok {
			if _, err := tenant.PutQuotas(ctx, svcs, svc, projectID, vals, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropProject deletes the cluster's emptied project: its remaining security groups (Neutron's
// "default"), its quota overrides, then the project. Anything else still in it (what Nova
// deletes with a server, a moment later) makes it wait.
func (in *Infra) dropProject(ctx context.Context, cl *conn, c rke2.ClusterRef) error {
	admin, err := in.conn(ctx)
	if err != nil {
		return err
	}
	svcs := tenant.ServicesOf(admin.Clients)
	inv, err := tenant.Find(ctx, svcs, append(tenant.ProjectKinds(), portKind(nil), fipKind(nil)), cl.ProjectID)
	if err != nil {
		return err
	}
	if !inv.Empty() {
		return fmt.Errorf("openstack: project %s of cluster %s still holds %s: %w", projectName(c), c.Name, inv.Names(), failure.ErrNotReady)
	}
	if err := (tenant.NetworkTeardown{ProjectID: cl.ProjectID, Kinds: []tenant.NetKind{tenant.SecurityGroups}}).Run(ctx, cl.Network); err != nil {
		return err
	}
	for _, svc := range []tenant.Service{tenant.Nova, tenant.Cinder, tenant.Neutron} {
		if err := tenant.DeleteQuotas(ctx, svcs, svc, cl.ProjectID); err != nil {
			return err
		}
	}
	if err := tenant.DeleteProject(ctx, admin.Identity, cl.ProjectID); err != nil {
		return err
	}
	in.mu.Lock()
	delete(in.clusters, c.UUID)
	in.mu.Unlock()
	backends.Log(ctx, in.log).Info("openstack project deleted", zap.String("cluster", c.Name), zap.String("project_id", cl.ProjectID))
	return nil
}
