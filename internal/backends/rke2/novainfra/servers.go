package novainfra

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/rke2"
	osc "github.com/waldur/site-agent/internal/clients/openstack"
	"github.com/waldur/site-agent/internal/failure"
)

// Servers lists the cluster's VMs by its tag. A server Nova is deleting (its task state is
// "deleting" from the moment the delete is accepted until the compute host has removed it,
// about a second) is gone for the planner: listing it would make a pass delete it again or
// count a node that is on its way out.
func (in *Infra) Servers(ctx context.Context, c rke2.ClusterRef) ([]rke2.ServerView, error) {
	cl, err := in.clusterConn(ctx, c, false)
	if err != nil || cl == nil {
		return nil, err
	}
	all, err := cl.servers(ctx, c)
	if err != nil {
		return nil, err
	}
	out := make([]rke2.ServerView, 0, len(all))
	for i := range all {
		if !going(&all[i]) {
			out = append(out, view(&all[i], chainName(c)))
		}
	}
	return out, nil
}

// going: Nova accepted the server's deletion.
func going(s *servers.Server) bool {
	return s.TaskState == "deleting" || s.Status == "DELETED" || s.Status == "SOFT_DELETED"
}

func (cl *conn) servers(ctx context.Context, c rke2.ClusterRef) ([]servers.Server, error) {
	page, err := servers.List(cl.compute, servers.ListOpts{Tags: rke2.ClusterTag(c.UUID)}).AllPages(ctx)
	if err != nil {
		return nil, osc.Classify("nova", fmt.Errorf("list servers of cluster %s: %w", c.Name, err))
	}
	return servers.ExtractServers(page)
}

// view is a Nova server as the planner sees it: Address is its fixed IP on network,
// FloatingIP a floating one there, Volumes how many volumes Nova shows attached.
func view(s *servers.Server, network string) rke2.ServerView {
	v := rke2.ServerView{ID: s.ID, Name: s.Name, Status: s.Status, Created: s.Created, Metadata: s.Metadata,
		Volumes: len(s.AttachedVolumes)}
	addrs, _ := s.Addresses[network].([]any)
	for _, a := range addrs {
		m, _ := a.(map[string]any)
		addr, _ := m["addr"].(string)
		switch m["OS-EXT-IPS:type"] {
		case "fixed":
			if v.Address == "" {
				v.Address = addr
			}
		case "floating":
			v.FloatingIP = addr
		}
	}
	return v
}

// CreateServer boots one node (see the package documentation). A live server of the same
// name in the cluster is adopted: its floating IP is made if missing and it is returned (unless
// req.Unlisted: the caller has just seen there is none). A
// failure forgets the cluster's network chain (chains.go): it may be what failed.
func (in *Infra) CreateServer(ctx context.Context, c rke2.ClusterRef, ni rke2.NetworkInfo, req rke2.ServerRequest) (rke2.ServerView, error) {
	v, err := in.createServer(ctx, c, ni, req)
	if err != nil {
		in.forgetChain(c.UUID)
	}
	return v, err
}

func (in *Infra) createServer(ctx context.Context, c rke2.ClusterRef, ni rke2.NetworkInfo, req rke2.ServerRequest) (rke2.ServerView, error) {
	cl, err := in.clusterConn(ctx, c, true)
	if err != nil {
		return rke2.ServerView{}, err
	}
	var existing []servers.Server
	if !req.Unlisted {
		if existing, err = cl.servers(ctx, c); err != nil {
			return rke2.ServerView{}, err
		}
	}
	for i := range existing {
		s := &existing[i]
		if s.Name == req.Name && s.Status != "ERROR" && !going(s) {
			return in.finish(ctx, cl, c, ni, req, view(s, chainName(c)))
		}
	}
	made, err := in.boot(ctx, cl, c, ni, req)
	if err != nil {
		return rke2.ServerView{}, err
	}
	return in.finish(ctx, cl, c, ni, req, made)
}

// finish makes the floating IP when asked and returns the server: as listed (adopted) or as
// just asked for (BUILD; Nova's answer to a create holds little more than the id, and reading
// the server back would say only that it builds).
func (in *Infra) finish(ctx context.Context, cl *conn, c rke2.ClusterRef, ni rke2.NetworkInfo, req rke2.ServerRequest, v rke2.ServerView) (rke2.ServerView, error) {
	if req.FloatingIP {
		if err := in.ensureFloatingIP(ctx, cl, c, ni, req.Name, v.ID); err != nil {
			return rke2.ServerView{}, err
		}
	}
	return v, nil
}

func (in *Infra) boot(ctx context.Context, cl *conn, c rke2.ClusterRef, ni rke2.NetworkInfo, req rke2.ServerRequest) (rke2.ServerView, error) {
	var none rke2.ServerView
	flavor, err := in.cachedFlavor(ctx, cl, req.Node.Flavor)
	if err != nil {
		return none, err
	}
	image, err := in.cachedImage(ctx, cl, req.Image)
	if err != nil {
		return none, err
	}
	sgs := append([]string{}, ni.SecurityGroups...)
	for _, name := range req.SecurityGroups {
		found, err := findGroups(ctx, cl, name)
		if err != nil {
			return none, err
		}
		if len(found) == 0 {
			return none, failure.Errorf("openstack: security group %q (from the order) not found", name)
		}
		sgs = append(sgs, found[0].ID)
	}
	key, err := in.ensureKeypair(ctx, cl, c, req.SSHPublicKey)
	if err != nil {
		return none, err
	}
	port, err := in.ensurePort(ctx, cl, c, ni, req.Name, sgs)
	if err != nil {
		return none, err
	}
	meta := req.Inventory.Metadata()
	meta[rke2.MetaVolumes] = strconv.Itoa(1 + len(req.Node.DataVolumes)) // the shape every pass checks
	opts := servers.CreateOpts{Name: req.Name, FlavorRef: flavor.ID, Networks: []servers.Network{{Port: port}},
		Metadata: meta, Tags: req.Inventory.Tags(),
		UserData:    []byte(base64.StdEncoding.EncodeToString(req.UserData.Bytes())),
		BlockDevice: blockDevices(image, flavor.Disk, req.Node)}
	var create servers.CreateOptsBuilder = opts
	if key != "" {
		create = keypairs.CreateOptsExt{CreateOptsBuilder: opts, KeyName: key}
	}
	s, err := servers.Create(ctx, cl.compute, create, nil).Extract()
	if err != nil {
		return none, osc.Classify("nova", fmt.Errorf("create server %s: %w", req.Name, err))
	}
	backends.Log(ctx, in.log).Info("server created", zap.String("cluster", c.Name), zap.String("server", req.Name), zap.String("id", s.ID))
	return rke2.ServerView{ID: s.ID, Name: req.Name, Status: "BUILD", Metadata: meta}, nil
}

// blockDevices: the system volume from the image (boot index 0; its size defaults to the
// flavor's disk) and one blank volume per data volume, all deleted with the server.
func blockDevices(image string, flavorDisk int, n rke2.NodeSpec) []servers.BlockDevice {
	size := n.SystemVolume.SizeGB
	if size == 0 {
		size = max(flavorDisk, 1)
	}
	out := []servers.BlockDevice{{SourceType: servers.SourceImage, UUID: image, BootIndex: 0, DestinationType: servers.DestinationVolume,
		VolumeSize: size, VolumeType: n.SystemVolume.Type, DeleteOnTermination: true}}
	for _, d := range n.DataVolumes {
		out = append(out, servers.BlockDevice{SourceType: servers.SourceBlank, BootIndex: -1, DestinationType: servers.DestinationVolume,
			VolumeSize: d.SizeGB, VolumeType: d.Type, DeleteOnTermination: true})
	}
	return out
}

// ensureKeypair imports the public key as rke2-<uuid>-<digest> ("" without a key).
func (in *Infra) ensureKeypair(ctx context.Context, cl *conn, c rke2.ClusterRef, public string) (string, error) {
	if public == "" {
		return "", nil
	}
	sum := sha256.Sum256([]byte(public))
	name := "rke2-" + c.UUID + "-" + hex.EncodeToString(sum[:4])
	_, err := keypairs.Get(ctx, cl.compute, name, nil).Extract()
	if err == nil {
		return name, nil
	}
	if !osc.IsNotFound(err) {
		return "", osc.Classify("nova", fmt.Errorf("get key pair %s: %w", name, err))
	}
	_, err = keypairs.Create(ctx, cl.compute, keypairs.CreateOpts{Name: name, PublicKey: public}).Extract()
	if err != nil && !failure.HasStatus(osc.Classify("nova", err), 409) {
		return "", osc.Classify("nova", fmt.Errorf("import key pair %s: %w", name, err))
	}
	return name, nil
}

// ensurePort adopts an unbound port of the node left by an interrupted pass or makes one.
func (in *Infra) ensurePort(ctx context.Context, cl *conn, c rke2.ClusterRef, ni rke2.NetworkInfo, name string, sgs []string) (string, error) {
	page, err := ports.List(cl.Network, ports.ListOpts{Name: name, NetworkID: ni.NetworkID, DeviceID: ""}).AllPages(ctx)
	if err != nil {
		return "", osc.NeutronErr("find port "+name, err)
	}
	found, err := ports.ExtractPorts(page)
	if err != nil {
		return "", err
	}
	for _, p := range found {
		if p.DeviceID == "" && p.Description == clusterDesc(c) {
			return p.ID, nil
		}
	}
	p, err := ports.Create(ctx, cl.Network, ports.CreateOpts{Name: name, NetworkID: ni.NetworkID, Description: clusterDesc(c),
		SecurityGroups: &sgs, ProjectID: cl.ProjectID, FixedIPs: []ports.IP{{SubnetID: ni.SubnetID}}}).Extract()
	if err != nil {
		return "", osc.NeutronErr("create port "+name, err)
	}
	return p.ID, nil
}

func fipDesc(c rke2.ClusterRef, node string) string { return clusterDesc(c) + " node=" + node }

// ensureFloatingIP gives the node's port a floating IP unless it has one. The port is the one
// made before the boot, found by name: Nova binds it to the server (device_id) only once the
// compute host builds it, a second or more after the create was accepted, and Neutron
// associates a floating IP with an unbound port as well.
func (in *Infra) ensureFloatingIP(ctx context.Context, cl *conn, c rke2.ClusterRef, ni rke2.NetworkInfo, node, serverID string) error {
	port, err := nodePort(ctx, cl, c, ni, node, serverID)
	if err != nil {
		return err
	}
	fips, err := listFIPs(ctx, cl, floatingips.ListOpts{PortID: port})
	if err != nil || len(fips) > 0 {
		return err
	}
	_, err = floatingips.Create(ctx, cl.Network, floatingips.CreateOpts{FloatingNetworkID: cl.extNetID, PortID: port,
		Description: fipDesc(c, node), ProjectID: cl.ProjectID}).Extract()
	if err != nil && gophercloud.ResponseCodeIs(err, 409) { // the port has one already (made meanwhile)
		if fips, lerr := listFIPs(ctx, cl, floatingips.ListOpts{PortID: port}); lerr == nil && len(fips) > 0 {
			return nil
		}
	}
	if err != nil {
		return osc.NeutronErr("create floating IP for "+node, err)
	}
	in.log.Info("floating IP created", zap.String("cluster", c.Name), zap.String("server", node))
	return nil
}

// RepairNode implements rke2.Infra (see there): a missing address is confirmed against the
// server's ports in Neutron, a missing floating IP made on the node's port. A failure or a
// port off the network forgets the cluster's network chain (chains.go).
func (in *Infra) RepairNode(ctx context.Context, c rke2.ClusterRef, ni rke2.NetworkInfo, s rke2.ServerView, floatingIP bool) (string, error) {
	problem, err := in.repairNode(ctx, c, ni, s, floatingIP)
	if problem != "" || err != nil {
		in.forgetChain(c.UUID)
	}
	return problem, err
}

func (in *Infra) repairNode(ctx context.Context, c rke2.ClusterRef, ni rke2.NetworkInfo, s rke2.ServerView, floatingIP bool) (string, error) {
	cl, err := in.clusterConn(ctx, c, true)
	if err != nil {
		return "", err
	}
	if s.Address == "" {
		ps, err := serverPorts(ctx, cl, s.ID)
		if err != nil {
			return "", err
		}
		if !onNetwork(ps, ni.NetworkID) {
			return "has no port on the cluster network", nil
		}
	}
	if floatingIP {
		return "", in.ensureFloatingIP(ctx, cl, c, ni, s.Name, s.ID)
	}
	return "", nil
}

// onNetwork: one of the ports has an address on the network.
func onNetwork(ps []ports.Port, networkID string) bool {
	for _, p := range ps {
		if p.NetworkID == networkID && len(p.FixedIPs) > 0 {
			return true
		}
	}
	return false
}

// nodePort is the port of the node's server: bound to it, else the node's unbound port in
// the cluster network (the server is still being built).
func nodePort(ctx context.Context, cl *conn, c rke2.ClusterRef, ni rke2.NetworkInfo, node, serverID string) (string, error) {
	page, err := ports.List(cl.Network, ports.ListOpts{Name: node, NetworkID: ni.NetworkID}).AllPages(ctx)
	if err != nil {
		return "", osc.NeutronErr("find port "+node, err)
	}
	found, err := ports.ExtractPorts(page)
	if err != nil {
		return "", err
	}
	unbound := ""
	for _, p := range found {
		switch {
		case p.DeviceID == serverID:
			return p.ID, nil
		case p.DeviceID == "" && p.Description == clusterDesc(c):
			unbound = p.ID
		}
	}
	if unbound == "" {
		return "", failure.Transient(fmt.Errorf("openstack: server %s (%s) has no port in the cluster network", node, serverID))
	}
	return unbound, nil
}

func serverPorts(ctx context.Context, cl *conn, serverID string) ([]ports.Port, error) {
	page, err := ports.List(cl.Network, ports.ListOpts{DeviceID: serverID}).AllPages(ctx)
	if err != nil {
		return nil, osc.NeutronErr("list ports of server "+serverID, err)
	}
	return ports.ExtractPorts(page)
}

func listFIPs(ctx context.Context, cl *conn, o floatingips.ListOpts) ([]floatingips.FloatingIP, error) {
	o.ProjectID = cl.ProjectID
	page, err := floatingips.List(cl.Network, o).AllPages(ctx)
	if err != nil {
		return nil, osc.NeutronErr("list floating IPs", err)
	}
	return floatingips.ExtractFloatingIPs(page)
}
