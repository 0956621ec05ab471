package tenant

import (
	"context"
	"fmt"
	neturl "net/url"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/backups"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/snapshots"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/pagination"

	osc "github.com/waldur/site-agent/internal/clients/openstack"
)

// ProjectKinds are what a project can hold besides the network objects: load balancers,
// servers, server groups, images, snapshots, backups and volumes, in deletion order (volumes
// after the servers they may be attached to and their snapshots). Glance images and Octavia
// load balancers are looked for only when the catalog has those services.
func ProjectKinds() []Kind {
	return []Kind{
		{Name: "load balancer", List: ListLoadBalancers, Remove: DeleteLoadBalancer},
		{Name: "server", List: ListServers, Remove: DeleteServer},
		{Name: "server group", List: listServerGroups, Remove: func(ctx context.Context, s Services, o Leftover) error {
			return servergroups.Delete(ctx, s.Compute, o.ID).ExtractErr()
		}},
		{Name: "image", List: listImages, Remove: deleteImage},
		{Name: "snapshot", List: listSnapshots, Remove: func(ctx context.Context, s Services, o Leftover) error {
			return snapshots.ForceDelete(ctx, s.Volume, o.ID).ExtractErr()
		}},
		{Name: "backup", List: listBackups, Remove: func(ctx context.Context, s Services, o Leftover) error {
			return backups.ForceDelete(ctx, s.Volume, o.ID).ExtractErr()
		}},
		{Name: "volume", After: []string{"server", "snapshot"}, List: ListVolumes, Remove: func(ctx context.Context, s Services, o Leftover) error {
			return volumes.ForceDelete(ctx, s.Volume, o.ID).ExtractErr()
		}},
	}
}

// ListLoadBalancers lists the project's Octavia load balancers.
func ListLoadBalancers(ctx context.Context, s Services, projectID string) ([]Leftover, error) {
	if s.LoadBalancer == nil {
		return nil, s.LoadBalancerErr // nil: no Octavia in the catalog, no load balancers
	}
	return Listed(ctx, "octavia", "list load balancers of project "+projectID,
		loadbalancers.List(s.LoadBalancer, loadbalancers.ListOpts{ProjectID: projectID}), loadbalancers.ExtractLoadBalancers,
		func(lb loadbalancers.LoadBalancer) (Leftover, bool) {
			return Leftover{ID: lb.ID, Name: lb.Name, Service: "octavia", Busy: lb.ProvisioningStatus == "PENDING_DELETE"}, true
		})
}

// DeleteLoadBalancer deletes a load balancer with its listeners, pools and members (cascade).
func DeleteLoadBalancer(ctx context.Context, s Services, o Leftover) error {
	return loadbalancers.Delete(ctx, s.LoadBalancer, o.ID, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr()
}

// ListServers lists the project's servers (as admin, all_tenants).
func ListServers(ctx context.Context, s Services, projectID string) ([]Leftover, error) {
	type server struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		Status    string `json:"status"`
		TaskState string `json:"OS-EXT-STS:task_state"`
	}
	extract := func(page pagination.Page) ([]server, error) {
		var all []server
		err := servers.ExtractServersInto(page, &all)
		return all, err
	}
	return Listed(ctx, "nova", "list servers of project "+projectID,
		servers.List(s.Compute, servers.ListOpts{AllTenants: true, TenantID: projectID}), extract,
		func(v server) (Leftover, bool) {
			return Leftover{ID: v.ID, Name: v.Name, Service: "nova", Busy: v.TaskState == "deleting" || v.Status == "DELETED", Status: v.Status}, true
		})
}

// DeleteServer deletes a server; a soft-deleted one needs forceDelete.
func DeleteServer(ctx context.Context, s Services, o Leftover) error {
	if o.Status == "SOFT_DELETED" {
		return servers.ForceDelete(ctx, s.Compute, o.ID).ExtractErr()
	}
	return servers.Delete(ctx, s.Compute, o.ID).ExtractErr()
}

// serverGroupPage is the size of one page of the all-projects server group list.
const serverGroupPage = 1000

// listServerGroups pages through every project's server groups (Nova cannot filter them by
// project) and keeps the project's; project_id is in the answer from microversion 2.13.
func listServerGroups(ctx context.Context, s Services, projectID string) ([]Leftover, error) {
	sc := *s.Compute
	sc.Microversion = "2.13"
	var out []Leftover
	for offset := 0; ; offset += serverGroupPage {
		page, err := servergroups.List(&sc, servergroups.ListOpts{AllProjects: true, Limit: serverGroupPage, Offset: offset}).AllPages(ctx)
		if err != nil {
			return nil, osc.Classify("nova", fmt.Errorf("list server groups: %w", err))
		}
		all, err := servergroups.ExtractServerGroups(page)
		if err != nil {
			return nil, err
		}
		for _, g := range all {
			if g.ProjectID == projectID {
				out = append(out, Leftover{ID: g.ID, Name: g.Name, Service: "nova"})
			}
		}
		if len(all) < serverGroupPage {
			return out, nil
		}
	}
}

// listImages lists the images the project owns, except public ones: an image is public only
// when an administrator made it so, and other projects may be using it.
func listImages(ctx context.Context, s Services, projectID string) ([]Leftover, error) {
	if s.Image == nil {
		return nil, s.ImageErr // nil: no Glance in the catalog, no images
	}
	return Listed(ctx, "glance", "list images of project "+projectID,
		images.List(s.Image, images.ListOpts{Owner: projectID, Visibility: "all"}), images.ExtractImages,
		func(im images.Image) (Leftover, bool) {
			o := Leftover{ID: im.ID, Name: im.Name, Service: "glance", Busy: im.Status == images.ImageStatusPendingDelete || im.Status == images.ImageStatusDeleted}
			if im.Protected {
				o.Status = "protected"
			}
			return o, im.Owner == projectID && im.Visibility != images.ImageVisibilityPublic
		})
}

// deleteImage deletes an image, lifting its protection first.
func deleteImage(ctx context.Context, s Services, o Leftover) error {
	if o.Status == "protected" {
		if _, err := images.Update(ctx, s.Image, o.ID, images.UpdateOpts{images.ReplaceImageProtected{NewProtected: false}}).Extract(); err != nil {
			return err
		}
	}
	return images.Delete(ctx, s.Image, o.ID).ExtractErr()
}

func listSnapshots(ctx context.Context, s Services, projectID string) ([]Leftover, error) {
	return Listed(ctx, "cinder", "list snapshots of project "+projectID,
		snapshots.ListDetail(s.Volume, snapshots.ListOpts{AllTenants: true, TenantID: projectID}), snapshots.ExtractSnapshots,
		func(v snapshots.Snapshot) (Leftover, bool) {
			return Leftover{ID: v.ID, Name: v.Name, Service: "cinder", Busy: v.Status == "deleting"}, true
		})
}

// listBackups lists the project's backups; one that incremental backups are based on waits
// until they are gone.
func listBackups(ctx context.Context, s Services, projectID string) ([]Leftover, error) {
	url := s.Volume.ServiceURL("backups", "detail") + "?all_tenants=true&project_id=" + neturl.QueryEscape(projectID)
	pager := pagination.NewPager(s.Volume, url, func(r pagination.PageResult) pagination.Page {
		return backups.BackupPage{LinkedPageBase: pagination.LinkedPageBase{PageResult: r}}
	})
	return Listed(ctx, "cinder", "list backups of project "+projectID, pager, backups.ExtractBackups,
		func(b backups.Backup) (Leftover, bool) {
			return Leftover{ID: b.ID, Name: b.Name, Service: "cinder", Busy: b.Status == "deleting", Blocked: b.HasDependentBackups}, true
		})
}

// ListVolumes lists the project's volumes with the servers they are attached to.
func ListVolumes(ctx context.Context, s Services, projectID string) ([]Leftover, error) {
	return Listed(ctx, "cinder", "list volumes of project "+projectID,
		volumes.List(s.Volume, volumes.ListOpts{AllTenants: true, TenantID: projectID}), volumes.ExtractVolumes,
		func(v volumes.Volume) (Leftover, bool) {
			o := Leftover{ID: v.ID, Name: v.Name, Service: "cinder", Busy: v.Status == "deleting"}
			for _, a := range v.Attachments {
				o.AttachedTo = append(o.AttachedTo, a.ServerID)
			}
			return o, true
		})
}

// Listed reads every page of pager, extracts its items and keeps those leftover turns into a
// Leftover (false: not one). A failed request is classified as svc's and explained by what; a
// failed extraction returns what it read with its error.
func Listed[T any](ctx context.Context, svc, what string, pager pagination.Pager,
	extract func(pagination.Page) ([]T, error), leftover func(T) (Leftover, bool)) ([]Leftover, error) {
	page, err := pager.AllPages(ctx)
	if err != nil {
		return nil, osc.Classify(svc, fmt.Errorf("%s: %w", what, err))
	}
	all, err := extract(page)
	var out []Leftover
	for _, v := range all {
		if o, ok := leftover(v); ok {
			out = append(out, o)
		}
	}
	return out, err
}
