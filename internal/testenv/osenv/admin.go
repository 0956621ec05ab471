package osenv

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	gos "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
)

// Admin holds the env's admin clients, for tests that check what code under test made in
// the admin project. Compute speaks microversion 2.52 (server tags; user data from 2.3).
type Admin struct {
	Compute, Network, Volume *gophercloud.ServiceClient
}

// AdminClients logs in as the env's admin.
func (e Env) AdminClients(ctx context.Context) (*Admin, error) {
	p, err := gos.AuthenticatedClient(ctx, e.AuthOptions())
	if err != nil {
		return nil, fmt.Errorf("admin login: %w", err)
	}
	a := &Admin{}
	eo := e.EndpointOpts()
	if a.Compute, err = gos.NewComputeV2(p, eo); err != nil {
		return nil, err
	}
	a.Compute.Microversion = "2.52"
	if a.Network, err = gos.NewNetworkV2(p, eo); err != nil {
		return nil, err
	}
	if a.Volume, err = gos.NewBlockStorageV3(p, eo); err != nil {
		return nil, err
	}
	return a, nil
}

// Server is a Nova server with the admin-only user data (base64, as Nova holds it).
type Server struct {
	servers.Server
	UserData string
}

// userData is what servers.Server leaves out (its UnmarshalJSON would swallow an embedding
// struct's own fields, hence two decodings).
type userData struct {
	UserData string `json:"OS-EXT-SRV-ATTR:user_data"`
}

// Servers lists the project's servers carrying every tag of tags ("" for all), with their
// user data.
func (a *Admin) Servers(ctx context.Context, tags string) ([]Server, error) {
	page, err := servers.List(a.Compute, servers.ListOpts{Tags: tags}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := servers.ExtractServers(page)
	if err != nil {
		return nil, err
	}
	var extra []userData
	if err := servers.ExtractServersInto(page, &extra); err != nil || len(extra) != len(all) {
		return nil, fmt.Errorf("user data of %d servers: %d found (%v)", len(all), len(extra), err)
	}
	out := make([]Server, len(all))
	for i := range all {
		out[i] = Server{Server: all[i], UserData: extra[i].UserData}
	}
	return out, nil
}

// Server reads one server with its user data.
func (a *Admin) Server(ctx context.Context, id string) (Server, error) {
	var raw struct {
		Server json.RawMessage `json:"server"`
	}
	// The body is a stream: decoded once, then twice from the copy.
	if err := servers.Get(ctx, a.Compute, id).Result.ExtractInto(&raw); err != nil {
		return Server{}, err
	}
	var s Server
	var extra userData
	if err := json.Unmarshal(raw.Server, &s.Server); err != nil {
		return Server{}, err
	}
	err := json.Unmarshal(raw.Server, &extra)
	s.UserData = extra.UserData
	return s, err
}

// Object is one OpenStack object a test found.
type Object struct {
	Kind   string // server, port, floating IP, router, network, security group, key pair
	ID     string // the key pair's name for a key pair
	Name   string
	Detail string // status, description or device
}

func (o Object) String() string { return fmt.Sprintf("%s %s (%s, %s)", o.Kind, o.Name, o.ID, o.Detail) }

// Mentioning lists the objects of the project whose name, description or tags contain key:
// servers, ports, floating IPs, routers, networks, security groups and key pairs. Code that
// names what it makes after a key (a cluster's UUID) can so be checked to have left nothing.
func (a *Admin) Mentioning(ctx context.Context, key string) ([]Object, error) {
	var out []Object
	has := func(s ...string) bool {
		return slices.ContainsFunc(s, func(v string) bool { return strings.Contains(v, key) })
	}
	ss, err := a.Servers(ctx, "")
	if err != nil {
		return nil, err
	}
	for _, s := range ss {
		texts := []string{s.Name}
		if s.Tags != nil {
			texts = append(texts, *s.Tags...)
		}
		if has(texts...) {
			out = append(out, Object{"server", s.ID, s.Name, s.Status + " " + s.TaskState})
		}
	}
	listers := []func(context.Context, func(...string) bool) ([]Object, error){a.floatingIPs, a.routers, a.ports, a.networks, a.groups, a.keypairs}
	for _, l := range listers {
		found, err := l(ctx, has)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}

// VolumeIDs lists the project's volumes.
func (a *Admin) VolumeIDs(ctx context.Context) ([]string, error) {
	page, err := volumes.List(a.Volume, volumes.ListOpts{}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := volumes.ExtractVolumes(page)
	ids := make([]string, 0, len(all))
	for _, v := range all {
		ids = append(ids, v.ID)
	}
	slices.Sort(ids)
	return ids, err
}

func (a *Admin) ports(ctx context.Context, has func(...string) bool) ([]Object, error) {
	page, err := ports.List(a.Network, ports.ListOpts{}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := ports.ExtractPorts(page)
	var out []Object
	for _, p := range all {
		if has(p.Name, p.Description) {
			out = append(out, Object{"port", p.ID, p.Name, fmt.Sprintf("device %q", p.DeviceID)})
		}
	}
	return out, err
}

func (a *Admin) floatingIPs(ctx context.Context, has func(...string) bool) ([]Object, error) {
	page, err := floatingips.List(a.Network, floatingips.ListOpts{}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := floatingips.ExtractFloatingIPs(page)
	var out []Object
	for _, f := range all {
		if has(f.Description) {
			out = append(out, Object{"floating IP", f.ID, f.FloatingIP, f.Description})
		}
	}
	return out, err
}

func (a *Admin) routers(ctx context.Context, has func(...string) bool) ([]Object, error) {
	page, err := routers.List(a.Network, routers.ListOpts{}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := routers.ExtractRouters(page)
	var out []Object
	for _, r := range all {
		if has(r.Name, r.Description) {
			out = append(out, Object{"router", r.ID, r.Name, r.Status})
		}
	}
	return out, err
}

func (a *Admin) networks(ctx context.Context, has func(...string) bool) ([]Object, error) {
	page, err := networks.List(a.Network, networks.ListOpts{}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := networks.ExtractNetworks(page)
	var out []Object
	for _, n := range all {
		if has(n.Name, n.Description) {
			out = append(out, Object{"network", n.ID, n.Name, n.Status})
		}
	}
	return out, err
}

func (a *Admin) groups(ctx context.Context, has func(...string) bool) ([]Object, error) {
	page, err := groups.List(a.Network, groups.ListOpts{}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := groups.ExtractGroups(page)
	var out []Object
	for _, g := range all {
		if has(g.Name, g.Description) {
			out = append(out, Object{"security group", g.ID, g.Name, g.Description})
		}
	}
	return out, err
}

func (a *Admin) keypairs(ctx context.Context, has func(...string) bool) ([]Object, error) {
	page, err := keypairs.List(a.Compute, nil).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := keypairs.ExtractKeyPairs(page)
	var out []Object
	for _, k := range all {
		if has(k.Name) {
			out = append(out, Object{"key pair", k.Name, k.Name, k.Type})
		}
	}
	return out, err
}
