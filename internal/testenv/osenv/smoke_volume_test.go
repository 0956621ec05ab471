package osenv_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	volumequotas "github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/quotasets"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
)

// volumeUsage shows Cinder usage accounting without a volume service: the
// API commits quota when it accepts a volume (left "creating": nothing
// schedules it), and an admin can reset it to "error" and delete it.
func (s *smoke) volumeUsage(t *testing.T) {
	var member *gophercloud.ServiceClient
	s.lat.do(t, "keystone POST /v3/auth/tokens (member) + block-storage client", func() error {
		p, err := openstack.AuthenticatedClient(s.ctx, gophercloud.AuthOptions{IdentityEndpoint: s.env.AuthURL,
			UserID: s.userID, Password: s.memberPassword, Scope: &gophercloud.AuthScope{ProjectID: s.projectID}})
		if err != nil {
			return err
		}
		member, err = openstack.NewBlockStorageV3(p, s.env.EndpointOpts())
		return err
	})
	var id string
	s.lat.do(t, "cinder POST /volumes (as member)", func() error {
		v, err := volumes.Create(s.ctx, member, volumes.CreateOpts{Size: 2, Name: s.name}, nil).Extract()
		if err == nil {
			id = v.ID
		}
		return err
	})
	s.cleanup("delete volume", func(ctx context.Context) error { return s.deleteVolume(ctx, id) })
	s.checkVolumeUsage(t, 1, 2)
	s.lat.do(t, "cinder POST /volumes/{id}/action os-reset_status + DELETE (admin)", func() error {
		return s.deleteVolume(s.ctx, id)
	})
	s.lat.do(t, "cinder GET /volumes/{id} until 404", func() error {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			_, err := volumes.Get(s.ctx, s.volume, id).Extract()
			if gophercloud.ResponseCodeIs(err, 404) {
				return nil
			}
			time.Sleep(200 * time.Millisecond)
		}
		return fmt.Errorf("volume %s still exists 30s after delete", id)
	})
	s.checkVolumeUsage(t, 0, 0)
}

func (s *smoke) deleteVolume(ctx context.Context, id string) error {
	err := volumes.ResetStatus(ctx, s.volume, id, volumes.ResetStatusOpts{Status: "error"}).ExtractErr()
	if err != nil {
		return err
	}
	return volumes.Delete(ctx, s.volume, id, volumes.DeleteOpts{}).ExtractErr()
}

// checkVolumeUsage reads the project's volume usage until it is the wanted one (at most 30 s):
// Cinder commits a deleted volume's quota after the volume is gone (cinder/volume/manager.py
// delete_volume: volume.destroy(), a usage notification, then QUOTAS.commit), so a read right
// after the volume's 404 can still count it.
func (s *smoke) checkVolumeUsage(t *testing.T, wantVolumes, wantGB int) {
	t.Helper()
	var u volumequotas.QuotaUsageSet
	s.lat.do(t, "cinder GET /os-quota-sets/{p}?usage=true", func() (err error) {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			u, err = volumequotas.GetUsage(s.ctx, s.volume, s.projectID).Extract()
			if err != nil || (u.Volumes.InUse == wantVolumes && u.Gigabytes.InUse == wantGB) || time.Now().After(deadline) {
				return err
			}
		}
	})
	if u.Volumes.InUse != wantVolumes || u.Gigabytes.InUse != wantGB {
		t.Errorf("cinder in_use volumes=%d gigabytes=%d after 30 s, want %d and %d", u.Volumes.InUse, u.Gigabytes.InUse, wantVolumes, wantGB)
	}
}
