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

	"github.com/waldur/site-agent/internal/clients/openstack/tenant"
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
	for _, kind := range []tenant.NetKind{tenant.FloatingIPs, tenant.Routers, tenant.Ports, tenant.Networks, tenant.SecurityGroups} {
		found, err := tenant.ListNet(ctx, a.Network, kind, "", "")
		if err != nil {
			return nil, err
		}
		for _, o := range found {
			if has(o.Name, o.Description) {
				out = append(out, Object{o.Kind.String(), o.ID, o.Name, netDetail(o)})
			}
		}
	}
	keys, err := a.keypairs(ctx, has)
	return append(out, keys...), err
}

// netDetail is what Object.Detail says of a Neutron object: a port's device, else its
// description.
func netDetail(o tenant.NetObject) string {
	if o.Kind == tenant.Ports {
		return fmt.Sprintf("device %q", o.DeviceID)
	}
	return o.Description
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
