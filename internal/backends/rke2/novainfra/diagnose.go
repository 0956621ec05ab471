package novainfra

import (
	"context"
	"fmt"

	"github.com/waldur/site-agent/internal/backends"
)

// Diagnose checks that OpenStack answers with the configured account, that the external
// network, the base image and the managed-mode flavors exist, and that the quotas leave room
// for the largest order the offering allows (headroom.go).
func (in *Infra) Diagnose(ctx context.Context) []backends.Check {
	s := in.settings
	cl, err := in.conn(ctx)
	if err != nil {
		return []backends.Check{{Name: "openstack", Detail: err.Error()}}
	}
	out := []backends.Check{{Name: "openstack", OK: true,
		Detail: fmt.Sprintf("%s as %s, project %s (%s), external network %s", s.OpenStack.AuthURL, s.OpenStack.Username,
			s.OpenStack.ProjectName, cl.ProjectID, s.OpenStack.ExternalNetworkName)}}
	img := backends.Check{Name: "openstack image " + s.BaseImageName, OK: true}
	if id, err := cl.image(ctx, s.BaseImageName); err != nil {
		img.OK, img.Detail = false, err.Error()
	} else {
		img.Detail = id
	}
	out = append(out, img)
	for _, name := range []string{s.ServerFlavorName, s.LBFlavorName} {
		if name == "" {
			continue
		}
		ch := backends.Check{Name: "openstack flavor " + name, OK: true}
		if f, err := cl.flavor(ctx, name); err != nil {
			ch.OK, ch.Detail = false, err.Error()
		} else {
			ch.Detail = fmt.Sprintf("%d vCPU, %d MB RAM", f.VCPUs, f.RAM)
		}
		out = append(out, ch)
	}
	return append(out, in.headroom(ctx, cl))
}
