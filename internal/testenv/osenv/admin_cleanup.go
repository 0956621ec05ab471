package osenv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/waldur/site-agent/internal/clients/openstack/tenant"
)

// DeleteMentioning deletes what Mentioning(key) finds, for a test's cleanup: servers first
// (waiting until Nova has removed them, with their volumes), then the Neutron objects in
// dependency order (tenant.NetworkTeardown: floating IPs, routers with their interfaces,
// ports, networks, security groups) and key pairs. It goes on after a failure and returns
// every error.
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
	mentions := func(o tenant.NetObject) bool {
		return strings.Contains(o.Name, key) || strings.Contains(o.Description, key)
	}
	keep(tenant.NetworkTeardown{Delete: mentions, KeepGoing: true}.Run(ctx, a.Network))
	for _, o := range found {
		if o.Kind == "key pair" {
			keep(keypairs.Delete(ctx, a.Compute, o.ID, nil).ExtractErr())
		}
	}
	return errors.Join(errs...)
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
