package novainfra_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
)

// chain is the name of the cluster's network, subnet, router and security group.
func (w *realWorld) chain() string { return "rke2-" + w.ref.Name + "-" + w.ref.UUID }

// assertNothingLeft lists, as admin, everything that mentions the cluster's UUID (every
// object novainfra makes carries it in its name, description or tags): servers, ports,
// floating IPs, routers, networks, security groups and key pairs.
func (w *realWorld) assertNothingLeft() {
	w.t.Helper()
	left, err := w.Mentioning(w.ctx, w.ref.UUID)
	must(w.t, err)
	if len(left) > 0 {
		w.t.Fatalf("left in OpenStack after TearDown: %v", left)
	}
}

// clusterPorts are the ports named after the cluster's nodes or marked with its description.
func (w *realWorld) clusterPorts() []ports.Port {
	var out []ports.Port
	for _, p := range w.ports(ports.ListOpts{}) {
		if strings.HasPrefix(p.Name, w.ref.Name+"-") || strings.Contains(p.Description, w.ref.UUID) {
			out = append(out, p)
		}
	}
	return out
}

func (w *realWorld) ports(o ports.ListOpts) []ports.Port {
	page, err := ports.List(w.Network, o).AllPages(w.ctx)
	must(w.t, err)
	all, err := ports.ExtractPorts(page)
	must(w.t, err)
	return all
}

func (w *realWorld) fips(o floatingips.ListOpts) []floatingips.FloatingIP {
	page, err := floatingips.List(w.Network, o).AllPages(w.ctx)
	must(w.t, err)
	all, err := floatingips.ExtractFloatingIPs(page)
	must(w.t, err)
	return all
}

func (w *realWorld) routers() []routers.Router {
	page, err := routers.List(w.Network, routers.ListOpts{Name: w.chain()}).AllPages(w.ctx)
	must(w.t, err)
	all, err := routers.ExtractRouters(page)
	must(w.t, err)
	return all
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func volumeShape(v *volumes.Volume) string {
	return fmt.Sprintf("%d GB bootable=%s %s", v.Size, v.Bootable, v.Status)
}

// hasAddress reports whether Nova's addresses (network name → list) hold addr.
func hasAddress(addresses map[string]any, addr string) bool {
	for _, l := range addresses {
		list, _ := l.([]any)
		for _, a := range list {
			if m, _ := a.(map[string]any); m["addr"] == addr {
				return true
			}
		}
	}
	return false
}

// sshKey is a fresh ed25519 public key in OpenSSH's authorized_keys format (Nova checks it).
func sshKey(t *testing.T) string {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	must(t, err)
	var wire []byte
	for _, field := range [][]byte{[]byte("ssh-ed25519"), pub} {
		wire = binary.BigEndian.AppendUint32(wire, uint32(len(field)))
		wire = append(wire, field...)
	}
	return "ssh-ed25519 " + base64.StdEncoding.EncodeToString(wire) + " site-agent-test"
}
