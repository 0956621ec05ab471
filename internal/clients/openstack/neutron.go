package openstack

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"

	"github.com/waldur/site-agent/internal/failure"
)

// The network chain of a tenant (network, router with a gateway, the subnet's interface),
// found by name before it is made so that every step can be repeated.

// NeutronErr classifies a Neutron error and explains a quota refusal.
func NeutronErr(what string, err error) error {
	err = Classify("neutron", fmt.Errorf("%s: %w", what, err))
	if failure.HasStatus(err, 409) && strings.Contains(err.Error(), "Quota exceeded") {
		return failure.Wrap(err, "the tenant's limits leave no room for its own network objects ("+what+
			"); allow at least 1 network, subnet, router and port, and the configured security groups and rules")
	}
	return err
}

// EnsureNetwork finds the project's network by name or creates it, returning its id.
func EnsureNetwork(ctx context.Context, nc *gophercloud.ServiceClient, projectID, name string) (string, error) {
	page, err := networks.List(nc, networks.ListOpts{Name: name, ProjectID: projectID}).AllPages(ctx)
	if err != nil {
		return "", NeutronErr("find network "+name, err)
	}
	found, err := networks.ExtractNetworks(page)
	if err != nil {
		return "", err
	}
	if len(found) > 0 {
		return found[0].ID, nil
	}
	net, err := networks.Create(ctx, nc, networks.CreateOpts{Name: name, ProjectID: projectID}).Extract()
	if err != nil {
		return "", NeutronErr("create network "+name, err)
	}
	return net.ID, nil
}

// EnsureRouter finds the project's router by name or creates it, with its gateway on the
// external network extNetID (set again when it points elsewhere).
func EnsureRouter(ctx context.Context, nc *gophercloud.ServiceClient, projectID, name, extNetID string) (string, error) {
	page, err := routers.List(nc, routers.ListOpts{Name: name, ProjectID: projectID}).AllPages(ctx)
	if err != nil {
		return "", NeutronErr("find router "+name, err)
	}
	found, err := routers.ExtractRouters(page)
	if err != nil {
		return "", err
	}
	gw := &routers.GatewayInfo{NetworkID: extNetID}
	if len(found) == 0 {
		r, err := routers.Create(ctx, nc, routers.CreateOpts{Name: name, ProjectID: projectID, GatewayInfo: gw}).Extract()
		if err != nil {
			return "", NeutronErr("create router "+name, err)
		}
		return r.ID, nil
	}
	r := found[0]
	if r.GatewayInfo.NetworkID != extNetID {
		if _, err := routers.Update(ctx, nc, r.ID, routers.UpdateOpts{GatewayInfo: gw}).Extract(); err != nil {
			return "", NeutronErr("set gateway of router "+name, err)
		}
	}
	return r.ID, nil
}

// EnsureInterface connects the subnet to the router unless one of the router's ports is
// already on it.
func EnsureInterface(ctx context.Context, nc *gophercloud.ServiceClient, routerID, subnetID string) error {
	attached, err := RouterPorts(ctx, nc, routerID)
	if err != nil {
		return err
	}
	for _, p := range attached {
		for _, ip := range p.FixedIPs {
			if ip.SubnetID == subnetID {
				return nil
			}
		}
	}
	_, err = routers.AddInterface(ctx, nc, routerID, routers.AddInterfaceOpts{SubnetID: subnetID}).Extract()
	if gophercloud.ResponseCodeIs(err, 400) && strings.Contains(err.Error(), "already has a port") {
		return nil
	}
	if err != nil {
		return NeutronErr("connect subnet "+subnetID+" to router "+routerID, err)
	}
	return nil
}

// RouterPorts lists the ports of a router (interfaces and gateway).
func RouterPorts(ctx context.Context, nc *gophercloud.ServiceClient, routerID string) ([]ports.Port, error) {
	page, err := ports.List(nc, ports.ListOpts{DeviceID: routerID}).AllPages(ctx)
	if err != nil {
		return nil, NeutronErr("list ports of router "+routerID, err)
	}
	return ports.ExtractPorts(page)
}

type extNetwork struct {
	networks.Network
	external.NetworkExternalExt
}

// FindExternalNetwork resolves an external network by name, then by id, and checks it is external.
func FindExternalNetwork(ctx context.Context, nc *gophercloud.ServiceClient, nameOrID string) (string, error) {
	var found []extNetwork
	page, err := networks.List(nc, networks.ListOpts{Name: nameOrID}).AllPages(ctx)
	if err == nil {
		err = networks.ExtractNetworksInto(page, &found)
	}
	if err != nil {
		return "", Classify("neutron", fmt.Errorf("find external network %q: %w", nameOrID, err))
	}
	if len(found) == 0 {
		var one extNetwork
		err := networks.Get(ctx, nc, nameOrID).ExtractInto(&one)
		if err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return "", Classify("neutron", fmt.Errorf("find external network %q: %w", nameOrID, err))
		}
		if err == nil {
			found = append(found, one)
		}
	}
	switch {
	case len(found) == 0:
		return "", failure.Errorf("openstack: external network %q not found", nameOrID)
	case len(found) > 1:
		return "", failure.Errorf("openstack: %d networks are named %q; name it by id", len(found), nameOrID)
	case !found[0].External:
		return "", failure.Errorf("openstack: network %q is not external (router:external is false)", nameOrID)
	}
	return found[0].ID, nil
}
