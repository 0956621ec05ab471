package openstacksim

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Booting Nova servers: POST /servers with block_device_mapping_v2, networks, security
// groups, metadata, tags, user data and a key pair, as Nova validates them.

type bdmBody struct {
	SourceType          string `json:"source_type"`
	UUID                string `json:"uuid"`
	BootIndex           *int   `json:"boot_index"`
	DeleteOnTermination bool   `json:"delete_on_termination"`
	DestinationType     string `json:"destination_type"`
	VolumeSize          int    `json:"volume_size"`
	VolumeType          string `json:"volume_type"`
	DeviceType          string `json:"device_type"`
	DiskBus             string `json:"disk_bus"`
	GuestFormat         string `json:"guest_format"`
	Tag                 string `json:"tag"`
}

type netBody struct {
	UUID    string `json:"uuid"`
	Port    string `json:"port"`
	FixedIP string `json:"fixed_ip"`
	Tag     string `json:"tag"`
}

type bootRequest struct {
	name, flavorRef, imageRef, userData, keyName string
	bdm                                          []bdmBody
	nets                                         []netBody
	groups                                       []struct {
		Name string `json:"name"`
	}
	metadata map[string]string
	tags     []string
}

func (c *call) decodeBoot() (*bootRequest, bool) {
	m, ok := c.object("server", "name", "flavorRef", "imageRef", "block_device_mapping_v2", "networks", "security_groups",
		"metadata", "tags", "user_data", "key_name", "availability_zone", "config_drive", "min_count", "max_count", "OS-DCF:diskConfig")
	if !ok {
		return nil, false
	}
	if _, has := m["tags"]; has {
		if major, minor := novaMicroversion(c.r); major == 2 && minor < 52 {
			c.fail(http.StatusBadRequest, "Invalid input for field/attribute server. Value: Additional properties are not allowed ('tags' was unexpected)")
			return nil, false
		}
	}
	b := &bootRequest{}
	var az, disk string
	var cfg bool
	var minC, maxC int
	if !c.fields(m, map[string]any{"name": &b.name, "flavorRef": &b.flavorRef, "imageRef": &b.imageRef,
		"block_device_mapping_v2": &b.bdm, "networks": &b.nets, "security_groups": &b.groups, "metadata": &b.metadata,
		"tags": &b.tags, "user_data": &b.userData, "key_name": &b.keyName, "availability_zone": &az,
		"config_drive": &cfg, "min_count": &minC, "max_count": &maxC, "OS-DCF:diskConfig": &disk}) {
		return nil, false
	}
	if minC > 1 || maxC > 1 {
		c.fail(http.StatusBadRequest, "the simulator boots one server per request")
		return nil, false
	}
	if msg := b.validate(); msg != "" {
		c.fail(http.StatusBadRequest, msg)
		return nil, false
	}
	return b, true
}

// validate checks what needs no state.
func (b *bootRequest) validate() string {
	switch {
	case strings.TrimSpace(b.name) == "" || len(b.name) > 255:
		return "Invalid input for field/attribute name."
	case b.flavorRef == "":
		return "Invalid input for field/attribute server. Value: 'flavorRef' is a required property"
	case len(b.nets) == 0:
		return "the simulator needs networks (a list of uuid or port)"
	case len(b.metadata) > 128:
		return "Quota exceeded for metadata_items"
	case len(b.tags) > 50:
		return "Invalid input for field/attribute tags: too many tags (at most 50)"
	}
	for k, v := range b.metadata {
		if k == "" || len(k) > 255 || len(v) > 255 {
			return "Invalid input for field/attribute metadata: keys and values are 1–255 characters"
		}
	}
	for _, t := range b.tags {
		if t == "" || len(t) > 60 || strings.ContainsAny(t, "/,") {
			return fmt.Sprintf("Invalid input for field/attribute tags. Value: %q", t)
		}
	}
	if b.userData != "" {
		raw, err := base64.StdEncoding.DecodeString(b.userData)
		if err != nil || len(b.userData) > 65535 {
			return "User data needs to be valid base 64."
		}
		b.userData = string(raw)
	}
	for _, n := range b.nets {
		if (n.UUID == "") == (n.Port == "") {
			return "Invalid input for field/attribute networks: each needs exactly one of uuid or port"
		}
	}
	boots := 0
	for i, d := range b.bdm {
		if d.BootIndex != nil && *d.BootIndex == 0 {
			boots++
		}
		switch {
		case d.DestinationType != "volume":
			return fmt.Sprintf("block_device_mapping_v2[%d]: the simulator supports destination_type volume only", i)
		case d.SourceType == "image" && d.UUID == "", d.SourceType == "blank" && d.UUID != "":
			return fmt.Sprintf("block_device_mapping_v2[%d]: Block Device Mapping is Invalid: bad uuid for source %s", i, d.SourceType)
		case d.SourceType != "image" && d.SourceType != "blank":
			return fmt.Sprintf("block_device_mapping_v2[%d]: the simulator supports source_type image and blank only", i)
		case d.VolumeSize < 1:
			return fmt.Sprintf("block_device_mapping_v2[%d]: Block Device Mapping is Invalid: volume_size is required", i)
		}
	}
	if boots > 1 || boots == 0 && b.imageRef == "" {
		return "Block Device Mapping is Invalid: Boot sequence for the instance and image/block device mapping combination is not valid."
	}
	return ""
}

func (c *call) createServer() {
	b, ok := c.decodeBoot()
	if !ok {
		return
	}
	st := c.s.st
	project := c.tok.projectID
	f := st.flavors[b.flavorRef]
	if f == nil {
		c.fail(http.StatusBadRequest, "Flavor "+b.flavorRef+" could not be found.")
		return
	}
	if msg := c.checkBootRefs(b, project); msg != "" {
		c.fail(http.StatusBadRequest, msg)
		return
	}
	now := time.Now().UTC()
	v := &server{ID: newID(true), Name: b.name, ProjectID: project, VCPUs: f.VCPUs, RAM: f.RAMMB, Status: "BUILD",
		UserID: c.tok.userID, FlavorID: f.ID, KeyName: b.keyName, UserData: b.userData, Created: now,
		readyAt: now.Add(c.s.opts.BuildDelay), Metadata: b.metadata, Tags: b.tags}
	if v.Metadata == nil {
		v.Metadata = map[string]string{}
	}
	for _, g := range b.groups {
		v.SecurityGroups = append(v.SecurityGroups, g.Name)
	}
	if len(v.SecurityGroups) == 0 {
		v.SecurityGroups = []string{"default"}
	}
	if c.s.errorNames[v.Name] {
		v.Status = "ERROR"
	}
	if msg, code := c.attachNetworks(v, b.nets); msg != "" {
		c.fail(code, msg)
		return
	}
	for _, d := range b.bdm {
		vol := &volume{ID: newID(true), ProjectID: project, Size: d.VolumeSize, AttachedTo: v.ID, Type: d.VolumeType,
			ImageID: d.UUID, Bootable: d.SourceType == "image", deleteOnTermination: d.DeleteOnTermination}
		st.volumes[vol.ID] = vol
	}
	st.servers[v.ID] = v
	groups := []map[string]string{}
	for _, g := range v.SecurityGroups {
		groups = append(groups, map[string]string{"name": g})
	}
	c.reply(http.StatusAccepted, map[string]any{"server": map[string]any{"id": v.ID, "links": []any{},
		"OS-DCF:diskConfig": "MANUAL", "security_groups": groups, "adminPass": newID(false)[:12]}})
}

// checkBootRefs checks the images, security groups and key pair a boot request names.
func (c *call) checkBootRefs(b *bootRequest, project string) string {
	st := c.s.st
	images := append([]string{}, b.imageRef)
	for _, d := range b.bdm {
		if d.SourceType == "image" {
			images = append(images, d.UUID)
		}
	}
	for _, id := range images {
		if id != "" && st.images[id] == nil {
			return "Image " + id + " could not be found."
		}
	}
	for _, g := range b.groups {
		if st.groupByNameOrID(project, g.Name) == nil {
			return "Security group " + g.Name + " not found for project " + project + "."
		}
	}
	if b.keyName != "" && st.keypairs[c.tok.userID+"/"+b.keyName] == nil {
		return "Invalid key_name provided."
	}
	return ""
}

func (st *state) groupByNameOrID(project, ref string) *secGroup {
	if ref == "default" {
		st.ensureDefaultGroup(project)
	}
	if g := st.groups[ref]; g != nil && g.ProjectID == project {
		return g
	}
	for _, g := range st.groups {
		if g.ProjectID == project && g.Name == ref {
			return g
		}
	}
	return nil
}

// attachNetworks binds the requested ports, or makes ports on the requested networks, for v.
func (c *call) attachNetworks(v *server, nets []netBody) (string, int) {
	st := c.s.st
	for _, n := range nets {
		if n.Port != "" {
			p := st.ports[n.Port]
			switch {
			case p == nil:
				return "Port id " + n.Port + " could not be found.", http.StatusBadRequest
			case p.DeviceID != "" || st.claimed(p.ID):
				return "Port " + n.Port + " is still in use.", http.StatusConflict
			}
			// Bound (device_id) only when the compute host builds the server: bindPorts.
			v.Ports = append(v.Ports, p.ID)
			continue
		}
		nw := st.networks[n.UUID]
		if nw == nil {
			return "Network " + n.UUID + " could not be found.", http.StatusBadRequest
		}
		sn := st.firstSubnet(nw.ID)
		if sn == nil {
			return "Network " + n.UUID + " requires a subnet in order to boot instances on.", http.StatusBadRequest
		}
		addr, ok := st.allocate(sn)
		if !ok {
			return "No more IP addresses available on network " + n.UUID + ".", http.StatusBadRequest
		}
		p := st.addPort(v.ID, v.ProjectID, nw.ID, "compute:nova", fixedIP{SubnetID: sn.ID, IPAddress: addr.String()})
		for _, g := range v.SecurityGroups {
			if sg := st.groupByNameOrID(v.ProjectID, g); sg != nil {
				p.SecurityGroups = append(p.SecurityGroups, sg.ID)
			}
		}
		v.Ports = append(v.Ports, p.ID)
		v.NovaPorts = append(v.NovaPorts, p.ID)
	}
	return "", 0
}

// claimed reports whether a server (bound to it or not yet) was given the port.
func (st *state) claimed(portID string) bool {
	for _, v := range st.servers {
		if slices.Contains(v.Ports, portID) {
			return true
		}
	}
	return false
}

// settle moves time-driven state on, as a real cloud does by itself: a server whose build
// delay is over is ACTIVE and its pre-made ports are bound to it (Nova binds a port from the
// compute host, a second or more after the create was accepted; until then the port's
// device_id is empty and the server has no addresses); a server whose DeleteDelay is over
// is removed.
func (st *state) settle(now time.Time) {
	for id, v := range st.servers {
		if v.deleting && !v.goneAt.IsZero() && !now.Before(v.goneAt) {
			st.removeServer(id)
			continue
		}
		if v.status(now) != "ACTIVE" {
			continue
		}
		for _, pid := range v.Ports {
			if p := st.ports[pid]; p != nil && p.DeviceID == "" {
				p.DeviceID, p.DeviceOwner = v.ID, "compute:nova"
			}
		}
	}
}

func (st *state) firstSubnet(netID string) *subnet {
	var best *subnet
	for _, sn := range st.subnets {
		if sn.NetworkID == netID && (best == nil || sn.ID < best.ID) {
			best = sn
		}
	}
	return best
}
