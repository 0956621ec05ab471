package osenv

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
)

// DeleteMentioning deletes what Mentioning(key) finds, for a test's cleanup: servers first
// (waiting until Nova has removed them, with their volumes), then floating IPs, routers
// (interfaces removed), ports, networks, security groups and key pairs. It goes on after a
// failure and returns every error.
func (a *Admin) DeleteMentioning(ctx context.Context, key string) error {
	found, err := a.Mentioning(ctx, key)
	if err != nil {
		return err
	}
	var errs []error
	keep := func(err error) {
		if err != nil && !gophercloud.ResponseCodeIs(err, 404) {
			errs = append(errs, err)
		}
	}
	servers0 := 0
	for _, o := range found {
		if o.Kind == "server" {
			servers0++
			keep(servers.Delete(ctx, a.Compute, o.ID).ExtractErr())
		}
	}
	if servers0 > 0 {
		keep(a.waitServersGone(ctx, key))
	}
	for _, o := range found {
		keep(a.deleteObject(ctx, o))
	}
	return errors.Join(errs...)
}

func (a *Admin) deleteObject(ctx context.Context, o Object) error {
	switch o.Kind {
	case "floating IP":
		return floatingips.Delete(ctx, a.Network, o.ID).ExtractErr()
	case "router":
		page, err := ports.List(a.Network, ports.ListOpts{DeviceID: o.ID, DeviceOwner: "network:router_interface"}).AllPages(ctx)
		if err != nil {
			return err
		}
		ifaces, _ := ports.ExtractPorts(page)
		for _, p := range ifaces {
			if _, err := routers.RemoveInterface(ctx, a.Network, o.ID, routers.RemoveInterfaceOpts{PortID: p.ID}).Extract(); err != nil {
				return err
			}
		}
		return routers.Delete(ctx, a.Network, o.ID).ExtractErr()
	case "port":
		return ports.Delete(ctx, a.Network, o.ID).ExtractErr()
	case "network":
		return networks.Delete(ctx, a.Network, o.ID).ExtractErr()
	case "security group":
		return groups.Delete(ctx, a.Network, o.ID).ExtractErr()
	case "key pair":
		return keypairs.Delete(ctx, a.Compute, o.ID, nil).ExtractErr()
	}
	return nil
}

// waitServersGone waits up to two minutes until no server mentions key.
func (a *Admin) waitServersGone(ctx context.Context, key string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		found, err := a.Mentioning(ctx, key)
		n := 0
		for _, o := range found {
			if o.Kind == "server" {
				n++
			}
		}
		if err == nil && n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("servers mentioning %s still there after 2 minutes (%v)", key, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
