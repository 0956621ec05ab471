package openstack

import (
	"context"
	"fmt"
	"net/http"
	neturl "net/url"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/backups"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/snapshots"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// leftover is one object a tenant's users made that terminate must delete (force_destroy) or
// refuse to leave behind.
type leftover struct {
	id      string
	service string // for error classification
	busy    bool   // its deletion is under way: nothing to ask
	blocked bool   // cannot be deleted yet (a backup other backups are based on)
	status  string // e.g. SOFT_DELETED servers, protected images
}

// kind is one sort of leftover. Kinds are deleted in the order of leftoverKinds; a kind
// waits while any kind in after still has objects.
type kind struct {
	name   string // singular, as shown to users: "server", "load balancer"
	after  []string
	list   func(ctx context.Context, c *clients, projectID string) ([]leftover, error)
	remove func(ctx context.Context, c *clients, o leftover) error
}

// leftoverKinds are what a tenant can hold besides what the agent made. Glance images and
// Octavia load balancers are looked for only when the catalog has those services.
var leftoverKinds = []kind{
	{name: "load balancer", list: listLoadBalancers, remove: deleteLoadBalancer},
	{name: "server", list: listServers, remove: deleteServer},
	{name: "server group", list: listServerGroups, remove: func(ctx context.Context, c *clients, o leftover) error {
		return servergroups.Delete(ctx, c.compute, o.id).ExtractErr()
	}},
	{name: "image", list: listImages, remove: deleteImage},
	{name: "snapshot", list: listSnapshots, remove: func(ctx context.Context, c *clients, o leftover) error {
		return snapshots.ForceDelete(ctx, c.volume, o.id).ExtractErr()
	}},
	{name: "backup", list: listBackups, remove: func(ctx context.Context, c *clients, o leftover) error {
		return backups.ForceDelete(ctx, c.volume, o.id).ExtractErr()
	}},
	{name: "volume", after: []string{"server", "snapshot"}, list: listVolumes, remove: func(ctx context.Context, c *clients, o leftover) error {
		return volumes.ForceDelete(ctx, c.volume, o.id).ExtractErr()
	}},
}

// inventory is what a tenant holds, by kind name.
type inventory map[string][]leftover

func (inv inventory) empty() bool {
	for _, l := range inv {
		if len(l) > 0 {
			return false
		}
	}
	return true
}

// String names every kind present with its count, e.g. "1 server(s), 2 volume(s) and 1 image(s)".
func (inv inventory) String() string {
	var parts []string
	for _, k := range leftoverKinds {
		if n := len(inv[k.name]); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s(s)", n, k.name))
		}
	}
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

func (c *clients) inventory(ctx context.Context, projectID string) (inventory, error) {
	inv := inventory{}
	for _, k := range leftoverKinds {
		found, err := k.list(ctx, c, projectID)
		if err != nil {
			return nil, err
		}
		if len(found) > 0 {
			inv[k.name] = found
		}
	}
	return inv, nil
}

// removeAll asks for the deletion of every leftover that can go now. Refusals that resolve on
// their own (409 while an object changes state, Cinder's 400 for a volume still attached) are
// not errors: the first is returned as a note for the caller's message.
func (c *clients) removeAll(ctx context.Context, inv inventory) (string, error) {
	note := ""
	for _, k := range leftoverKinds {
		if waits(inv, k.after) {
			continue
		}
		for _, o := range inv[k.name] {
			if o.busy || o.blocked {
				continue
			}
			err := k.remove(ctx, c, o)
			switch {
			case err == nil || gophercloud.ResponseCodeIs(err, http.StatusNotFound):
			case gophercloud.ResponseCodeIs(err, http.StatusConflict) || gophercloud.ResponseCodeIs(err, http.StatusBadRequest):
				if note == "" {
					note = fmt.Sprintf("%s %s: %v", k.name, o.id, classify(o.service, err))
				}
			default:
				return note, classify(o.service, fmt.Errorf("delete %s %s: %w", k.name, o.id, err))
			}
		}
	}
	return note, nil
}

func waits(inv inventory, after []string) bool {
	for _, a := range after {
		if len(inv[a]) > 0 {
			return true
		}
	}
	return false
}

func listLoadBalancers(ctx context.Context, c *clients, projectID string) ([]leftover, error) {
	if c.loadBalancer == nil {
		return nil, c.loadBalancerErr // nil: no Octavia in the catalog, no load balancers
	}
	page, err := loadbalancers.List(c.loadBalancer, loadbalancers.ListOpts{ProjectID: projectID}).AllPages(ctx)
	if err != nil {
		return nil, classify("octavia", fmt.Errorf("list load balancers of project %s: %w", projectID, err))
	}
	all, err := loadbalancers.ExtractLoadBalancers(page)
	var out []leftover
	for _, lb := range all {
		out = append(out, leftover{id: lb.ID, service: "octavia", busy: lb.ProvisioningStatus == "PENDING_DELETE"})
	}
	return out, err
}

// deleteLoadBalancer deletes a load balancer with its listeners, pools and members (cascade).
func deleteLoadBalancer(ctx context.Context, c *clients, o leftover) error {
	return loadbalancers.Delete(ctx, c.loadBalancer, o.id, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr()
}

func listServers(ctx context.Context, c *clients, projectID string) ([]leftover, error) {
	page, err := servers.List(c.compute, servers.ListOpts{AllTenants: true, TenantID: projectID}).AllPages(ctx)
	if err != nil {
		return nil, classify("nova", fmt.Errorf("list servers of project %s: %w", projectID, err))
	}
	var all []struct {
		ID        string `json:"id"`
		Status    string `json:"status"`
		TaskState string `json:"OS-EXT-STS:task_state"`
	}
	err = servers.ExtractServersInto(page, &all)
	var out []leftover
	for _, s := range all {
		out = append(out, leftover{id: s.ID, service: "nova", busy: s.TaskState == "deleting" || s.Status == "DELETED", status: s.Status})
	}
	return out, err
}

// deleteServer deletes a server; a soft-deleted one needs forceDelete.
func deleteServer(ctx context.Context, c *clients, o leftover) error {
	if o.status == "SOFT_DELETED" {
		return servers.ForceDelete(ctx, c.compute, o.id).ExtractErr()
	}
	return servers.Delete(ctx, c.compute, o.id).ExtractErr()
}

// serverGroupPage is the size of one page of the all-projects server group list.
const serverGroupPage = 1000

// listServerGroups pages through every project's server groups (Nova cannot filter them by
// project) and keeps the project's; project_id is in the answer from microversion 2.13.
func listServerGroups(ctx context.Context, c *clients, projectID string) ([]leftover, error) {
	sc := *c.compute
	sc.Microversion = "2.13"
	var out []leftover
	for offset := 0; ; offset += serverGroupPage {
		page, err := servergroups.List(&sc, servergroups.ListOpts{AllProjects: true, Limit: serverGroupPage, Offset: offset}).AllPages(ctx)
		if err != nil {
			return nil, classify("nova", fmt.Errorf("list server groups: %w", err))
		}
		all, err := servergroups.ExtractServerGroups(page)
		if err != nil {
			return nil, err
		}
		for _, g := range all {
			if g.ProjectID == projectID {
				out = append(out, leftover{id: g.ID, service: "nova"})
			}
		}
		if len(all) < serverGroupPage {
			return out, nil
		}
	}
}

// listImages lists the images the project owns, except public ones: an image is public only
// when an administrator made it so, and other projects may be using it.
func listImages(ctx context.Context, c *clients, projectID string) ([]leftover, error) {
	if c.image == nil {
		return nil, c.imageErr // nil: no Glance in the catalog, no images
	}
	page, err := images.List(c.image, images.ListOpts{Owner: projectID, Visibility: "all"}).AllPages(ctx)
	if err != nil {
		return nil, classify("glance", fmt.Errorf("list images of project %s: %w", projectID, err))
	}
	all, err := images.ExtractImages(page)
	var out []leftover
	for _, im := range all {
		if im.Owner != projectID || im.Visibility == images.ImageVisibilityPublic {
			continue
		}
		o := leftover{id: im.ID, service: "glance", busy: im.Status == images.ImageStatusPendingDelete || im.Status == images.ImageStatusDeleted}
		if im.Protected {
			o.status = "protected"
		}
		out = append(out, o)
	}
	return out, err
}

// deleteImage deletes an image, lifting its protection first.
func deleteImage(ctx context.Context, c *clients, o leftover) error {
	if o.status == "protected" {
		if _, err := images.Update(ctx, c.image, o.id, images.UpdateOpts{images.ReplaceImageProtected{NewProtected: false}}).Extract(); err != nil {
			return err
		}
	}
	return images.Delete(ctx, c.image, o.id).ExtractErr()
}

func listSnapshots(ctx context.Context, c *clients, projectID string) ([]leftover, error) {
	page, err := snapshots.ListDetail(c.volume, snapshots.ListOpts{AllTenants: true, TenantID: projectID}).AllPages(ctx)
	if err != nil {
		return nil, classify("cinder", fmt.Errorf("list snapshots of project %s: %w", projectID, err))
	}
	all, err := snapshots.ExtractSnapshots(page)
	var out []leftover
	for _, s := range all {
		out = append(out, leftover{id: s.ID, service: "cinder", busy: s.Status == "deleting"})
	}
	return out, err
}

// listBackups lists the project's backups; one that incremental backups are based on waits
// until they are gone.
func listBackups(ctx context.Context, c *clients, projectID string) ([]leftover, error) {
	url := c.volume.ServiceURL("backups", "detail") + "?all_tenants=true&project_id=" + neturl.QueryEscape(projectID)
	pager := pagination.NewPager(c.volume, url, func(r pagination.PageResult) pagination.Page {
		return backups.BackupPage{LinkedPageBase: pagination.LinkedPageBase{PageResult: r}}
	})
	page, err := pager.AllPages(ctx)
	if err != nil {
		return nil, classify("cinder", fmt.Errorf("list backups of project %s: %w", projectID, err))
	}
	all, err := backups.ExtractBackups(page)
	var out []leftover
	for _, b := range all {
		out = append(out, leftover{id: b.ID, service: "cinder", busy: b.Status == "deleting", blocked: b.HasDependentBackups})
	}
	return out, err
}

func listVolumes(ctx context.Context, c *clients, projectID string) ([]leftover, error) {
	page, err := volumes.List(c.volume, volumes.ListOpts{AllTenants: true, TenantID: projectID}).AllPages(ctx)
	if err != nil {
		return nil, classify("cinder", fmt.Errorf("list volumes of project %s: %w", projectID, err))
	}
	all, err := volumes.ExtractVolumes(page)
	var out []leftover
	for _, v := range all {
		out = append(out, leftover{id: v.ID, service: "cinder", busy: v.Status == "deleting"})
	}
	return out, err
}
