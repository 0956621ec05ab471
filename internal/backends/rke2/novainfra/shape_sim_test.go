package novainfra_test

import (
	"context"
	"testing"

	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/sim/openstacksim"
)

// Defect 4 of issue 17, the OpenStack side: a server's listing shows its volumes, fixed and
// floating address and the volumes it was made with; RepairNode makes a missing floating IP
// once (a floating IP create whose answer was lost is found by its port, not made twice) and
// reports a server whose port is gone.
func TestRepairNode(t *testing.T) {
	in, sim, ref := newSimInfra(t, openstacksim.Options{})
	ctx := context.Background()
	ni, err := in.EnsureNetwork(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	req := simRequest(ref, false)
	req.Node.DataVolumes = []rke2.DataVolume{{Volume: rke2.Volume{SizeGB: 10}, MountPoint: "/opt/rke2_storage"}}
	if _, err := in.CreateServer(ctx, ref, ni, req); err != nil {
		t.Fatal(err)
	}
	list := func() rke2.ServerView {
		vs, err := in.Servers(ctx, ref)
		if err != nil || len(vs) != 1 {
			t.Fatalf("servers %+v %v", vs, err)
		}
		return vs[0]
	}
	v := list()
	if v.Volumes != 2 || v.Metadata[rke2.MetaVolumes] != "2" || v.Address == "" || v.FloatingIP != "" {
		t.Fatalf("view %+v", v)
	}
	sim.FailNext("neutron POST /v2.0/floatingips", 1, openstacksim.FaultLoseResponse)
	if _, err := in.RepairNode(ctx, ref, ni, v, true); err == nil {
		t.Fatal("a floating IP create whose answer was lost reported success")
	}
	for range 2 {
		if why, err := in.RepairNode(ctx, ref, ni, list(), true); err != nil || why != "" {
			t.Fatalf("repair: %q %v", why, err)
		}
	}
	fips := sim.FloatingIPs("")
	if len(fips) != 1 || list().FloatingIP != fips[0].Address {
		t.Fatalf("floating IPs %+v, server %+v: want exactly one, shown on the server", fips, list())
	}
	sim.DeleteFloatingIPs(fips[0].PortID)
	if why, err := in.RepairNode(ctx, ref, ni, list(), true); err != nil || why != "" || len(sim.FloatingIPs("")) != 1 {
		t.Fatalf("a floating IP deleted by hand: %q %v, %d floating IPs", why, err, len(sim.FloatingIPs("")))
	}
	gone := list()
	gone.Address = "" // Nova's listing shows no address: Neutron has the port, so the node is whole
	if why, err := in.RepairNode(ctx, ref, ni, gone, false); err != nil || why != "" {
		t.Fatalf("a port Nova does not show: %q %v", why, err)
	}
	sim.DetachVolume(sim.Servers()[0].Volumes[1].ID)
	if v := list(); v.Volumes != 1 {
		t.Fatalf("after a detach: %+v", v)
	}
}
