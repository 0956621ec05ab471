package novainfra_test

import (
	"encoding/base64"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"

	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/failure"
)

// EnsureNetwork on real Neutron makes the chain once: a second call finds every piece.
func TestRealNovaEnsureNetworkIsIdempotent(t *testing.T) {
	w := newRealWorld(t)
	first, err := w.infra.EnsureNetwork(w.ctx, w.ref)
	if err != nil {
		t.Fatal(err)
	}
	n1, calls1 := w.calls.take()
	second, err := w.infra.EnsureNetwork(w.ctx, w.ref)
	if err != nil {
		t.Fatal(err)
	}
	n2, calls2 := w.calls.take()
	t.Logf("EnsureNetwork: %d requests the first time (%s), %d the second (%s)", n1, calls1, n2, calls2)
	if first.NetworkID != second.NetworkID || first.SubnetID != second.SubnetID || !slices.Equal(first.SecurityGroups, second.SecurityGroups) {
		t.Fatalf("second EnsureNetwork made new objects: %+v then %+v", first, second)
	}
	rs := w.routers()
	if len(rs) != 1 || rs[0].GatewayInfo.NetworkID == "" {
		t.Fatalf("routers %+v, want one with a gateway", rs)
	}
	ifaces := w.ports(ports.ListOpts{DeviceID: rs[0].ID, DeviceOwner: "network:router_interface"})
	if len(ifaces) != 1 || ifaces[0].NetworkID != first.NetworkID {
		t.Fatalf("router interfaces %+v, want one on the cluster network", ifaces)
	}
	w.tearDown()
}

// A node on real Nova: boot from a volume made from the image plus a blank data volume, on a
// pre-made port, with inventory metadata and tags, user data, a key pair and a floating IP;
// listed by its tag with status and address; a second CreateServer adopts it; DeleteServer
// removes server, volumes, port and floating IP; TearDown leaves nothing.
func TestRealNovaServerLifecycle(t *testing.T) {
	w := newRealWorld(t)
	ni, err := w.infra.EnsureNetwork(w.ctx, w.ref)
	if err != nil {
		t.Fatal(err)
	}
	w.calls.take()
	name := rke2.NodeName(w.ref.Name, rke2.RoleServer, 0)
	inv := rke2.Inventory{Cluster: w.ref.UUID, Role: rke2.RoleServer, Initial: true, Stage: rke2.StageInstall}
	ud := w.userData(name, inv)
	req := rke2.ServerRequest{Name: name, Inventory: inv, Image: w.env.Image, UserData: ud, FloatingIP: true,
		SSHPublicKey: sshKey(t), Node: rke2.NodeSpec{Flavor: "m1.small", SystemVolume: rke2.Volume{SizeGB: 64},
			DataVolumes: []rke2.DataVolume{{Volume: rke2.Volume{SizeGB: 20}, MountPoint: "/opt/rke2_storage"}}}}
	start := time.Now()
	made, err := w.infra.CreateServer(w.ctx, w.ref, ni, req)
	if err != nil {
		t.Fatal(err)
	}
	n, calls := w.calls.take()
	t.Logf("CreateServer answered in %s with %d requests (%s); status %s", time.Since(start).Round(time.Millisecond), n, calls, made.Status)
	active := w.waitActive(made.ID, start)
	n, _ = w.calls.take()
	t.Logf("ACTIVE %s after CreateServer began (%d requests of Servers polls every 200 ms)", active.Round(time.Millisecond), n)
	w.checkServer(made.ID, req, ni)
	vols := w.checkVolumes(made.ID)
	again, err := w.infra.CreateServer(w.ctx, w.ref, ni, req)
	if err != nil || again.ID != made.ID {
		t.Fatalf("second CreateServer: %v, id %s (want the adopted %s)", err, again.ID, made.ID)
	}
	n, calls = w.calls.take()
	t.Logf("CreateServer of a live server: %d requests (%s)", n, calls)
	start = time.Now()
	if err := w.infra.DeleteServer(w.ctx, w.ref, again); err != nil {
		t.Fatal(err)
	}
	gone := w.waitFor("server deleted", time.Minute, func() (bool, error) {
		_, err := servers.Get(w.ctx, w.Compute, made.ID).Extract()
		return gophercloud.ResponseCodeIs(err, 404), err
	})
	t.Logf("server gone %s after DeleteServer", gone.Round(time.Millisecond))
	w.waitFor("volumes deleted with the server", time.Minute, func() (bool, error) {
		for _, id := range vols {
			if _, err := volumes.Get(w.ctx, w.Volume, id).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
				return false, err
			}
		}
		return true, nil
	})
	if left := w.clusterPorts(); len(left) != 0 {
		t.Fatalf("ports left after DeleteServer: %+v", left)
	}
	w.tearDown()
}

// A server Nova puts into ERROR shows as such in Servers, and DeleteServer removes it.
func TestRealNovaServerInError(t *testing.T) {
	w := newRealWorld(t)
	ni, err := w.infra.EnsureNetwork(w.ctx, w.ref)
	if err != nil {
		t.Fatal(err)
	}
	name := rke2.NodeName(w.ref.Name, rke2.RoleAgent, 0)
	inv := rke2.Inventory{Cluster: w.ref.UUID, Role: rke2.RoleAgent, Stage: rke2.StageInstall}
	made, err := w.infra.CreateServer(w.ctx, w.ref, ni, rke2.ServerRequest{Name: name, Inventory: inv, Image: w.env.Image,
		UserData: w.userData(name, inv), Node: rke2.NodeSpec{Flavor: "m1.tiny", SystemVolume: rke2.Volume{SizeGB: 64}}})
	if err != nil {
		t.Fatal(err)
	}
	w.waitActive(made.ID, time.Now())
	if err := servers.ResetState(w.ctx, w.Compute, made.ID, servers.StateError).ExtractErr(); err != nil {
		t.Fatalf("os-resetState: %v", err)
	}
	got, err := w.infra.Servers(w.ctx, w.ref)
	if err != nil || len(got) != 1 || got[0].Status != "ERROR" || got[0].Name != name {
		t.Fatalf("Servers after os-resetState error: %+v, %v", got, err)
	}
	if err := w.infra.DeleteServer(w.ctx, w.ref, got[0]); err != nil {
		t.Fatal(err)
	}
	if left, err := w.infra.Servers(w.ctx, w.ref); err != nil || len(left) != 0 {
		t.Fatalf("Servers right after DeleteServer: %+v, %v (want none: Nova is deleting it)", left, err)
	}
	w.tearDown()
}

// tearDown calls TearDown until Nova has finished deleting the cluster's servers (until then
// it answers ErrNotReady), then checks that nothing is left.
func (w *realWorld) tearDown() {
	w.t.Helper()
	waited := w.waitFor("TearDown", time.Minute, func() (bool, error) {
		err := w.infra.TearDown(w.ctx, w.ref)
		if err != nil && !errors.Is(err, failure.ErrNotReady) {
			w.t.Fatalf("TearDown: %v", err)
		}
		return err == nil, err
	})
	w.t.Logf("TearDown done after %s", waited.Round(time.Millisecond))
	w.assertNothingLeft()
}

// waitActive polls Servers (the planner's view) until the server is ACTIVE with an address.
func (w *realWorld) waitActive(id string, since time.Time) time.Duration {
	w.t.Helper()
	w.waitFor("server ACTIVE", 2*time.Minute, func() (bool, error) {
		all, err := w.infra.Servers(w.ctx, w.ref)
		for _, s := range all {
			if s.ID == id && s.Status == "ERROR" {
				w.t.Fatalf("server %s went to ERROR", s.Name)
			}
			if s.ID == id && s.Status == "ACTIVE" && s.Address != "" {
				return true, nil
			}
		}
		return false, err
	})
	return time.Since(since)
}

// checkServer compares what Nova holds with the request: metadata, tags, user data (read
// back as admin), key pair, the pre-made port with its groups, and the floating IP.
func (w *realWorld) checkServer(id string, req rke2.ServerRequest, ni rke2.NetworkInfo) {
	t := w.t
	s, err := w.Server(w.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range req.Inventory.Metadata() {
		if s.Metadata[k] != v {
			t.Errorf("metadata %s = %q, want %q (all: %v)", k, s.Metadata[k], v, s.Metadata)
		}
	}
	if s.Tags == nil || !slices.Equal(sorted(*s.Tags), sorted(req.Inventory.Tags())) {
		t.Errorf("tags %v, want %v", s.Tags, req.Inventory.Tags())
	}
	if raw, err := base64.StdEncoding.DecodeString(s.UserData); err != nil || string(raw) != string(req.UserData.Bytes()) {
		t.Errorf("user data read back differs (%d bytes, decode error %v; sent %d bytes)", len(raw), err, len(req.UserData.Bytes()))
	}
	if s.KeyName == "" {
		t.Error("no key pair on the server")
	}
	pts := w.ports(ports.ListOpts{DeviceID: id})
	if len(pts) != 1 || pts[0].Name != req.Name || pts[0].NetworkID != ni.NetworkID || !slices.Equal(pts[0].SecurityGroups, ni.SecurityGroups) {
		t.Fatalf("server ports %+v, want the pre-made port %s on %s with groups %v", pts, req.Name, ni.NetworkID, ni.SecurityGroups)
	}
	fips := w.fips(floatingips.ListOpts{PortID: pts[0].ID})
	if len(fips) != 1 {
		t.Fatalf("floating IPs on the port: %+v", fips)
	}
	w.waitFor("the floating IP in the server's addresses", 30*time.Second, func() (bool, error) {
		s, err := servers.Get(w.ctx, w.Compute, id).Extract()
		return err == nil && hasAddress(s.Addresses, fips[0].FloatingIP), err
	})
}

// checkVolumes: two volumes attached, the boot one made from the image (64 GB, bootable),
// the data one blank (20 GB); returns their ids.
func (w *realWorld) checkVolumes(id string) []string {
	t := w.t
	s, err := servers.Get(w.ctx, w.Compute, id).Extract()
	if err != nil {
		t.Fatal(err)
	}
	var ids, shapes []string
	for _, a := range s.AttachedVolumes {
		v, err := volumes.Get(w.ctx, w.Volume, a.ID).Extract()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, v.ID)
		shapes = append(shapes, volumeShape(v))
	}
	if want := []string{"20 GB bootable=false in-use", "64 GB bootable=true in-use"}; !slices.Equal(sorted(shapes), want) {
		t.Fatalf("volumes %v, want %v", shapes, want)
	}
	return ids
}

// A server deleted while Nova is still building it (a stray, or a cluster terminated
// mid-create) leaves no port behind, although its port was not bound to it yet.
func TestRealNovaDeleteWhileBuilding(t *testing.T) {
	w := newRealWorld(t)
	ni, err := w.infra.EnsureNetwork(w.ctx, w.ref)
	if err != nil {
		t.Fatal(err)
	}
	name := rke2.NodeName(w.ref.Name, rke2.RoleAgent, 1)
	inv := rke2.Inventory{Cluster: w.ref.UUID, Role: rke2.RoleAgent, Index: 1, Stage: rke2.StageInstall}
	made, err := w.infra.CreateServer(w.ctx, w.ref, ni, rke2.ServerRequest{Name: name, Inventory: inv, Image: w.env.Image,
		UserData: w.userData(name, inv), Node: rke2.NodeSpec{Flavor: "m1.tiny", SystemVolume: rke2.Volume{SizeGB: 64}}})
	if err != nil {
		t.Fatal(err)
	}
	bound := len(w.ports(ports.ListOpts{DeviceID: made.ID}))
	if err := w.infra.DeleteServer(w.ctx, w.ref, made); err != nil {
		t.Fatal(err)
	}
	t.Logf("deleted in %s with %d port(s) bound", made.Status, bound)
	w.waitFor("the server deleted", time.Minute, func() (bool, error) {
		_, err := servers.Get(w.ctx, w.Compute, made.ID).Extract()
		return gophercloud.ResponseCodeIs(err, 404), err
	})
	if left := w.clusterPorts(); len(left) != 0 {
		t.Fatalf("ports left after deleting a server in BUILD: %+v", left)
	}
	w.tearDown()
}
