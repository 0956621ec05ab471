package tenant

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"github.com/gophercloud/gophercloud/v2/pagination"

	osc "github.com/waldur/site-agent/internal/clients/openstack"
	"github.com/waldur/site-agent/internal/failure"
)

// NetKind is a kind of Neutron object a NetworkTeardown deletes; the constants are in the
// order it deletes them.
type NetKind int

// The kinds, in deletion order.
const (
	FloatingIPs NetKind = iota
	Routers
	Ports
	Subnets
	Networks
	SecurityGroups
)

var netKindNames = [...]string{FloatingIPs: "floating IP", Routers: "router", Ports: "port", Subnets: "subnet",
	Networks: "network", SecurityGroups: "security group"}

func (k NetKind) String() string { return netKindNames[k] }

// NetObject is one Neutron object as a NetworkTeardown's Delete sees it.
type NetObject struct {
	Kind                  NetKind
	ID, Name, Description string
	NetworkID             string // ports and subnets
	DeviceOwner, DeviceID string // ports
}

// NetworkTeardown deletes Neutron objects in dependency order: floating IPs, routers (their
// interfaces removed first), ports, subnets, networks, security groups. Each kind is listed
// when its turn comes, so what an earlier step took with it (a floating IP's port, a router's
// interfaces and gateway port) is not asked for again; objects already gone (404) are
// skipped. A network that still has a port other than DHCP's when its turn comes is not
// deleted: the error names each port (permanent: someone else's server or load balancer).
//
// The openstack backend takes a whole project apart with it, the rke2 backend's novainfra one
// cluster's network chain, and the tier-2 tests' cleanup whatever names a test's key.
type NetworkTeardown struct {
	// ProjectID lists the objects of this project only ("": every project the credentials see).
	ProjectID string
	// Name lists only routers, networks and security groups of this name ("": any name).
	Name string
	// Kinds limits the teardown to these kinds (nil: every kind).
	Kinds []NetKind
	// Delete picks the objects to delete among those listed (nil: all). Ports a network device
	// owns (DHCP, a router's interface or gateway, a floating IP) are never offered: they go
	// with their owner.
	Delete func(NetObject) bool
	// KeepGoing goes on past a failed deletion and returns every error joined (test cleanup);
	// without it the first failure stops the teardown.
	KeepGoing bool
}

// deleteNet deletes one object of its kind (a switch, not a table of adapted calls: a table
// built from function values is filled in at start-up in every agent).
func deleteNet(ctx context.Context, nc *gophercloud.ServiceClient, o NetObject) error {
	switch o.Kind {
	case FloatingIPs:
		return floatingips.Delete(ctx, nc, o.ID).ExtractErr()
	case Routers:
		return deleteRouter(ctx, nc, o)
	case Ports:
		return ports.Delete(ctx, nc, o.ID).ExtractErr()
	case Subnets:
		return subnets.Delete(ctx, nc, o.ID).ExtractErr()
	case Networks:
		return deleteNetwork(ctx, nc, o)
	default:
		return groups.Delete(ctx, nc, o.ID).ExtractErr()
	}
}

// Run deletes what the teardown selects, on the Neutron client nc.
func (t NetworkTeardown) Run(ctx context.Context, nc *gophercloud.ServiceClient) error {
	var errs []error
	for kind := range netKindNames {
		if t.Kinds != nil && !slices.Contains(t.Kinds, NetKind(kind)) {
			continue
		}
		found, err := ListNet(ctx, nc, NetKind(kind), t.ProjectID, t.Name)
		if err != nil {
			if !t.KeepGoing {
				return err
			}
			errs = append(errs, err)
			continue
		}
		for _, o := range found {
			if o.Kind == Ports && strings.HasPrefix(o.DeviceOwner, "network:") || t.Delete != nil && !t.Delete(o) {
				continue
			}
			if err := deleteNet(ctx, nc, o); err != nil && !osc.IsNotFound(err) {
				if !t.KeepGoing {
					return wrapNeutron(o, err)
				}
				errs = append(errs, wrapNeutron(o, err))
			}
		}
	}
	return errors.Join(errs...)
}

// wrapNeutron names the object in a failed deletion; a refusal TearDown made itself (a
// failure.Error) passes as it is.
func wrapNeutron(o NetObject, err error) error {
	var fe *failure.Error
	if errors.As(err, &fe) {
		return err
	}
	return osc.NeutronErr(fmt.Sprintf("delete %s %s (%s)", o.Kind, o.Name, o.ID), err)
}

// ListNet lists the objects of one kind in a project ("": every project the credentials
// see), DHCP ports left out; name, when set, selects routers, networks and security groups by
// name.
func ListNet(ctx context.Context, nc *gophercloud.ServiceClient, kind NetKind, projectID, name string) ([]NetObject, error) {
	var out []NetObject
	var err error
	switch kind {
	case FloatingIPs:
		out, err = listed(ctx, floatingips.List(nc, floatingips.ListOpts{ProjectID: projectID}), floatingips.ExtractFloatingIPs,
			func(f floatingips.FloatingIP) NetObject {
				return NetObject{ID: f.ID, Name: f.FloatingIP, Description: f.Description}
			})
	case Routers:
		out, err = listed(ctx, routers.List(nc, routers.ListOpts{ProjectID: projectID, Name: name}), routers.ExtractRouters,
			func(r routers.Router) NetObject { return NetObject{ID: r.ID, Name: r.Name, Description: r.Description} })
	case Ports:
		out, err = portsOf(ctx, nc, ports.ListOpts{ProjectID: projectID})
	case Subnets:
		out, err = listed(ctx, subnets.List(nc, subnets.ListOpts{ProjectID: projectID}), subnets.ExtractSubnets,
			func(s subnets.Subnet) NetObject {
				return NetObject{ID: s.ID, Name: s.Name, Description: s.Description, NetworkID: s.NetworkID}
			})
	case Networks:
		out, err = listed(ctx, networks.List(nc, networks.ListOpts{ProjectID: projectID, Name: name}), networks.ExtractNetworks,
			func(n networks.Network) NetObject {
				return NetObject{ID: n.ID, Name: n.Name, Description: n.Description}
			})
	case SecurityGroups:
		out, err = listed(ctx, groups.List(nc, groups.ListOpts{ProjectID: projectID, Name: name}), groups.ExtractGroups,
			func(g groups.SecGroup) NetObject {
				return NetObject{ID: g.ID, Name: g.Name, Description: g.Description}
			})
	}
	if err != nil {
		return nil, osc.NeutronErr("list "+kind.String()+"s", err)
	}
	for i := range out {
		out[i].Kind = kind
	}
	return out, nil
}

// listed reads every page of a listing and converts each object.
func listed[T any](ctx context.Context, pager pagination.Pager, extract func(pagination.Page) ([]T, error), conv func(T) NetObject) ([]NetObject, error) {
	page, err := pager.AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := extract(page)
	if err != nil {
		return nil, err
	}
	out := make([]NetObject, 0, len(all))
	for _, x := range all {
		out = append(out, conv(x))
	}
	return out, nil
}

// deleteRouter removes the router's interfaces (Neutron refuses to delete a router that has
// any), then the router with its gateway port.
func deleteRouter(ctx context.Context, nc *gophercloud.ServiceClient, o NetObject) error {
	attached, err := osc.RouterPorts(ctx, nc, o.ID)
	if err != nil {
		return err
	}
	for _, p := range attached {
		if !IsRouterInterface(p.DeviceOwner) {
			continue
		}
		_, err := routers.RemoveInterface(ctx, nc, o.ID, routers.RemoveInterfaceOpts{PortID: p.ID}).Extract()
		if err != nil && !osc.IsNotFound(err) {
			return err
		}
	}
	return routers.Delete(ctx, nc, o.ID).ExtractErr()
}

// IsRouterInterface reports whether a port's device owner is a router interface (not its
// gateway): network:router_interface and its distributed and HA forms.
func IsRouterInterface(owner string) bool {
	return strings.HasPrefix(owner, "network:router_interface") || owner == "network:ha_router_replicated_interface"
}

func isDHCP(owner string) bool { return strings.HasPrefix(owner, "network:dhcp") }

// portsOf lists ports but DHCP's.
func portsOf(ctx context.Context, nc *gophercloud.ServiceClient, opts ports.ListOpts) ([]NetObject, error) {
	all, err := listed(ctx, ports.List(nc, opts), ports.ExtractPorts, func(p ports.Port) NetObject {
		return NetObject{Kind: Ports, ID: p.ID, Name: p.Name, Description: p.Description, NetworkID: p.NetworkID,
			DeviceOwner: p.DeviceOwner, DeviceID: p.DeviceID}
	})
	out := all[:0]
	for _, p := range all {
		if !isDHCP(p.DeviceOwner) {
			out = append(out, p)
		}
	}
	return out, err
}

// deleteNetwork deletes a network (and its subnets) unless a port other than DHCP's is still
// on it: then the error names each.
func deleteNetwork(ctx context.Context, nc *gophercloud.ServiceClient, o NetObject) error {
	left, err := portsOf(ctx, nc, ports.ListOpts{NetworkID: o.ID})
	if err != nil {
		return err
	}
	if len(left) > 0 {
		blockers := make([]string, 0, len(left))
		for _, p := range left {
			blockers = append(blockers, fmt.Sprintf("port %s (%s, device %s %s)", p.Name, p.ID, p.DeviceOwner, p.DeviceID))
		}
		sort.Strings(blockers)
		return failure.Errorf("openstack: network %s is still used by %s", o.Name, strings.Join(blockers, ", "))
	}
	return networks.Delete(ctx, nc, o.ID).ExtractErr()
}
