package openstacksim

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// doMV is do with a compute microversion header.
func (c *client) doMV(mv, method, path, body string, want int) []byte {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
	req.Header.Set("X-Auth-Token", c.token)
	req.Header.Set("Content-Type", "application/json")
	if mv != "" {
		req.Header.Set("OpenStack-API-Version", "compute "+mv)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		c.t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	return b
}

func bootBody(name, image, netID, extra string) string {
	ud := base64.StdEncoding.EncodeToString([]byte("#cloud-config\n"))
	return `{"server":{"name":"` + name + `","flavorRef":"3","imageRef":"","networks":[{"uuid":"` + netID + `"}],` +
		`"block_device_mapping_v2":[{"source_type":"image","uuid":"` + image + `","boot_index":0,"destination_type":"volume","volume_size":10,"delete_on_termination":true},` +
		`{"source_type":"blank","boot_index":-1,"destination_type":"volume","volume_size":5,"delete_on_termination":true}],` +
		`"metadata":{"k":"v"},"user_data":"` + ud + `"` + extra + `}}`
}

func TestNovaBootListDelete(t *testing.T) {
	sim, c := start(t)
	img := sim.AddNamedImage("ubuntu")
	var net struct{ Network struct{ ID string } }
	_ = json.Unmarshal(c.do("POST", "/network/v2.0/networks", `{"network":{"name":"n1"}}`, 201).body, &net)
	c.do("POST", "/network/v2.0/subnets", `{"subnet":{"network_id":"`+net.Network.ID+`","cidr":"10.0.0.0/24","ip_version":4}}`, 201)
	nv := "/compute/v2.1"

	// Strictness: tags need 2.52 on create and 2.26 to filter; unknown members are refused.
	c.doMV("2.51", "POST", nv+"/servers", bootBody("a", img, net.Network.ID, `,"tags":["x"]`), 400)
	c.doMV("2.52", "POST", nv+"/servers", bootBody("a", img, net.Network.ID, `,"bogus":1`), 400)
	c.doMV("2.25", "GET", nv+"/servers/detail?tags=x", "", 400)
	c.doMV("2.52", "POST", nv+"/servers", bootBody("a", img, net.Network.ID, `,"key_name":"nokey"`), 400)

	c.doMV("", "POST", nv+"/os-keypairs", `{"keypair":{"name":"k","public_key":"ssh-ed25519 AAAA x"}}`, 200)
	var created struct{ Server struct{ ID string } }
	_ = json.Unmarshal(c.doMV("2.52", "POST", nv+"/servers", bootBody("a", img, net.Network.ID, `,"tags":["x","y"],"key_name":"k"`), 202), &created)
	c.doMV("2.52", "POST", nv+"/servers", bootBody("b", img, net.Network.ID, ``), 202)

	var list struct {
		Servers []struct {
			ID, Name, Status string
			Tags             []string
			Addresses        map[string][]struct{ Addr string }
		}
	}
	_ = json.Unmarshal(c.doMV("2.52", "GET", nv+"/servers/detail?tags=x", "", 200), &list)
	if len(list.Servers) != 1 || list.Servers[0].ID != created.Server.ID || list.Servers[0].Status != "ACTIVE" ||
		len(list.Servers[0].Addresses["n1"]) != 1 {
		t.Fatalf("list by tag: %+v", list.Servers)
	}
	info := sim.Servers()
	if len(info) != 2 || info[0].UserData != "#cloud-config\n" || info[0].Metadata["k"] != "v" || len(info[0].Volumes) != 2 ||
		!info[0].Volumes[0].DeleteOnTermination || info[0].KeyName != "k" {
		t.Fatalf("inspect: %+v", info)
	}
	if ips := info[0].FixedIPs; len(ips) != 1 || ips[0] != list.Servers[0].Addresses["n1"][0].Addr {
		t.Fatalf("fixed IPs %v, want the address Nova lists", ips)
	}
	if n := len(sim.Volumes(c.project)); n != 4 {
		t.Fatalf("volumes in cinder: %d, want 4", n)
	}
	sim.FailServers("b")
	if s := sim.Servers()[1]; s.Status != "ERROR" {
		t.Fatalf("FailServers: %+v", s)
	}
	c.doMV("", "DELETE", nv+"/servers/"+created.Server.ID, "", 204)
	c.doMV("", "GET", nv+"/servers/"+created.Server.ID, "", 404)
	if n := len(sim.Volumes(c.project)); n != 2 {
		t.Fatalf("volumes after delete: %d, want 2", n)
	}
	if sim.Calls()["nova POST /servers"] != 5 {
		t.Fatalf("calls: %v", sim.Calls())
	}
}

func TestNovaFlavors(t *testing.T) {
	_, c := start(t)
	var fl struct{ Flavors []struct{ ID, Name string } }
	_ = json.Unmarshal(c.doMV("", "GET", "/compute/v2.1/flavors/detail", "", 200), &fl)
	if len(fl.Flavors) != len(DefaultFlavors()) {
		t.Fatalf("flavors: %+v", fl)
	}
	c.doMV("", "GET", "/compute/v2.1/flavors/nope", "", 404)
}

// Like Nova, a pre-made port is bound to its server (device_id) only once the compute host
// builds it, the server shows no addresses until then, and a deleted server stays listed
// with task state "deleting" for DeleteDelay, its port still bound, before it is gone.
func TestNovaBindsPortsLateAndDeletesLate(t *testing.T) {
	sim, c := startWith(t, Options{BuildDelay: 300 * time.Millisecond, DeleteDelay: 300 * time.Millisecond})
	img := sim.AddNamedImage("ubuntu")
	var net, port struct {
		Network, Port struct {
			ID       string
			DeviceID string `json:"device_id"`
		}
	}
	_ = json.Unmarshal(c.do("POST", "/network/v2.0/networks", `{"network":{"name":"n1"}}`, 201).body, &net)
	c.do("POST", "/network/v2.0/subnets", `{"subnet":{"network_id":"`+net.Network.ID+`","cidr":"10.0.0.0/24","ip_version":4}}`, 201)
	_ = json.Unmarshal(c.do("POST", "/network/v2.0/ports", `{"port":{"name":"p","network_id":"`+net.Network.ID+`"}}`, 201).body, &port)
	body := strings.Replace(bootBody("a", img, net.Network.ID, ""), `{"uuid":"`+net.Network.ID+`"}`, `{"port":"`+port.Port.ID+`"}`, 1)
	var created struct{ Server struct{ ID string } }
	_ = json.Unmarshal(c.doMV("2.52", "POST", "/compute/v2.1/servers", body, 202), &created)
	c.doMV("2.52", "POST", "/compute/v2.1/servers", strings.Replace(body, `"name":"a"`, `"name":"b"`, 1), 409)
	type view struct {
		Server struct {
			Status    string
			Task      *string `json:"OS-EXT-STS:task_state"`
			Addresses map[string][]any
		}
	}
	device := func() string {
		var ports struct {
			Ports []struct {
				DeviceID string `json:"device_id"`
			}
		}
		_ = json.Unmarshal(c.do("GET", "/network/v2.0/ports?name=p", "", 200).body, &ports)
		if len(ports.Ports) != 1 {
			t.Fatalf("ports named p: %+v", ports)
		}
		return ports.Ports[0].DeviceID
	}
	get := func() (view, string) {
		var v view
		_ = json.Unmarshal(c.doMV("2.52", "GET", "/compute/v2.1/servers/"+created.Server.ID, "", 200), &v)
		return v, device()
	}
	if v, dev := get(); v.Server.Status != "BUILD" || dev != "" || len(v.Server.Addresses) != 0 {
		t.Fatalf("while building: %+v, port device %q; want BUILD, unbound, no addresses", v, dev)
	}
	time.Sleep(350 * time.Millisecond)
	if v, dev := get(); v.Server.Status != "ACTIVE" || dev != created.Server.ID || len(v.Server.Addresses["n1"]) != 1 {
		t.Fatalf("once built: %+v, port device %q; want ACTIVE, bound, an address", v, dev)
	}
	c.doMV("", "DELETE", "/compute/v2.1/servers/"+created.Server.ID, "", 204)
	if v, dev := get(); v.Server.Task == nil || *v.Server.Task != "deleting" || dev != created.Server.ID {
		t.Fatalf("right after the delete: %+v, port device %q; want deleting, still bound", v, dev)
	}
	time.Sleep(350 * time.Millisecond)
	c.doMV("", "GET", "/compute/v2.1/servers/"+created.Server.ID, "", 404)
	if dev := device(); dev != "" {
		t.Fatalf("port still bound to %q after the server is gone", dev)
	}
}
