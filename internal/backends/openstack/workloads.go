package openstack

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/waldur/site-agent/internal/failure"
	"go.uber.org/zap"
)

// workloads are the tenant's servers and volumes (ids).
type workloads struct{ servers, volumes []string }

func (w workloads) empty() bool { return len(w.servers) == 0 && len(w.volumes) == 0 }

func (c *clients) listWorkloads(ctx context.Context, projectID string) (workloads, error) {
	var w workloads
	page, err := servers.List(c.compute, servers.ListOpts{AllTenants: true, TenantID: projectID}).AllPages(ctx)
	if err != nil {
		return w, classify("nova", fmt.Errorf("list servers of project %s: %w", projectID, err))
	}
	all, err := servers.ExtractServers(page)
	if err != nil {
		return w, err
	}
	for _, s := range all {
		w.servers = append(w.servers, s.ID)
	}
	vpage, err := volumes.List(c.volume, volumes.ListOpts{AllTenants: true, TenantID: projectID}).AllPages(ctx)
	if err != nil {
		return w, classify("cinder", fmt.Errorf("list volumes of project %s: %w", projectID, err))
	}
	vols, err := volumes.ExtractVolumes(vpage)
	if err != nil {
		return w, err
	}
	for _, v := range vols {
		w.volumes = append(w.volumes, v.ID)
	}
	return w, nil
}

// clearWorkloads refuses to go on while the tenant has servers or volumes, unless
// force_destroy is set: then they are deleted (volumes force-deleted, whatever their state)
// and the tenant is polled until they are gone, up to force_destroy_wait.
func (b *Backend) clearWorkloads(ctx context.Context, c *clients, p *projects.Project) error {
	w, err := c.listWorkloads(ctx, p.ID)
	if err != nil || w.empty() {
		return err
	}
	if !b.settings.ForceDestroy {
		return failure.Errorf("tenant %s still has %d server(s) and %d volume(s); delete them first or set backend_settings.force_destroy",
			p.Name, len(w.servers), len(w.volumes))
	}
	b.log.Warn("force_destroy: deleting the tenant's servers and volumes", zap.String("project_id", p.ID),
		zap.Int("servers", len(w.servers)), zap.Int("volumes", len(w.volumes)))
	for _, id := range w.servers {
		if err := servers.Delete(ctx, c.compute, id).ExtractErr(); err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return classify("nova", fmt.Errorf("delete server %s: %w", id, err))
		}
	}
	deadline := time.Now().Add(b.settings.ForceDestroyWait)
	for {
		// Volumes go after the servers they may be attached to; repeat until nothing is left.
		for _, id := range w.volumes {
			err := volumes.ForceDelete(ctx, c.volume, id).ExtractErr()
			if err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) && !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) {
				return classify("cinder", fmt.Errorf("force-delete volume %s: %w", id, err))
			}
		}
		if time.Now().After(deadline) {
			return failure.Transient(fmt.Errorf("force_destroy: tenant %s still has %d server(s) and %d volume(s) after %s; will retry",
				p.Name, len(w.servers), len(w.volumes), b.settings.ForceDestroyWait))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(b.pollEvery):
		}
		if w, err = c.listWorkloads(ctx, p.ID); err != nil || w.empty() {
			return err
		}
	}
}
