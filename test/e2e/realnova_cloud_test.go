package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"

	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/sim/nodeemu"
	"github.com/waldur/site-agent/internal/sim/simfault"
	"github.com/waldur/site-agent/internal/testenv/osenv"
)

// realCloud is the loopback OpenStack of scripts/openstack/up.sh --compute, reached by the
// agent through osProxy (which counts its requests and can inject faults) and by the node
// emulator and the tests directly, as admin.
type realCloud struct {
	env   osenv.Env
	admin *osenv.Admin
	proxy *osProxy
	ctx   context.Context
}

func newRealCloud(t *testing.T) *realCloud {
	t.Helper()
	env := osenv.LoadCompute(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	admin, err := env.AdminClients(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return &realCloud{env: env, admin: admin, proxy: newOSProxy(t, env), ctx: ctx}
}

func (c *realCloud) settings() string {
	e := c.env
	return fmt.Sprintf(`base_image_name: %q
managed_rancher_server_flavor_name: "m1.large"
allocate_floating_ip_to_all_nodes: true
openstack:
  auth_url: %q
  username: %q
  password: %q
  user_domain_name: %q
  project_name: %q
  project_domain_name: %q
  region_name: %q
  external_network_name: %q
`, e.Image, c.proxy.authURL(e.AuthURL), e.Username, e.Password, e.UserDomain, e.ProjectName, e.ProjectDomain, e.Region, e.ExternalNetwork)
}

// servers lists the project's rke2 servers with their user data (an error lists none: the
// emulator tries again).
func (c *realCloud) servers() []cloudServer {
	all, err := c.admin.Servers(c.ctx, rke2.TagManaged)
	if err != nil {
		return nil
	}
	out := make([]cloudServer, 0, len(all))
	for _, s := range all {
		ud, _ := base64.StdEncoding.DecodeString(s.UserData)
		vcpus, _ := s.Flavor["vcpus"].(float64) // microversion 2.47+: the flavor itself
		ram, _ := s.Flavor["ram"].(float64)
		out = append(out, cloudServer{ID: s.ID, Name: s.Name, Status: s.Status, UserData: string(ud),
			FixedIPs: fixedIPs(s.Addresses), Deleting: s.TaskState == "deleting", VCPUs: int(vcpus), RAMMB: int(ram)})
	}
	return out
}

// fixedIPs reads the fixed addresses out of a Nova server's addresses
// ({"net": [{"addr": …, "OS-EXT-IPS:type": "fixed"}]}).
func fixedIPs(addresses map[string]any) []string {
	var out []string
	for _, list := range addresses {
		entries, _ := list.([]any)
		for _, e := range entries {
			if m, ok := e.(map[string]any); ok && m["OS-EXT-IPS:type"] == "fixed" {
				if a, ok := m["addr"].(string); ok {
					out = append(out, a)
				}
			}
		}
	}
	return out
}

func (c *realCloud) poll() time.Duration { return 250 * time.Millisecond }

// machine reads the server's boot volume from Cinder (its root file system).
func (c *realCloud) machine(s cloudServer) nodeemu.Machine {
	m := nodeemu.Machine{CPUs: s.VCPUs, MemoryMiB: s.RAMMB}
	srv, err := c.admin.Server(c.ctx, s.ID)
	if err != nil {
		return m
	}
	for _, a := range srv.AttachedVolumes {
		if v, err := volumes.Get(c.ctx, c.admin.Volume, a.ID).Extract(); err == nil && v.Bootable == "true" {
			m.EphemeralGiB = v.Size
		}
	}
	return m
}

// osProxy puts a counting (and optionally faulting) reverse proxy in front of each OpenStack
// API; the Keystone one rewrites the service catalog so that every endpoint the agent finds
// there is a proxy.
type osProxy struct {
	mu      sync.Mutex
	counts  map[string]int                // "nova POST" → requests
	faults  map[string]*simfault.Injector // by service
	rewrite *strings.Replacer             // real base URL → proxy base URL
}

// osPorts are the loopback APIs by port (scripts/openstack/lib.sh).
var osPorts = map[string]string{"5000": "keystone", "8774": "nova", "9696": "neutron", "8776": "cinder", "9292": "glance", "8778": "placement"}

func newOSProxy(t *testing.T, env osenv.Env) *osProxy {
	p := &osProxy{counts: map[string]int{}, faults: map[string]*simfault.Injector{}}
	host := "127.0.0.1"
	if u, err := url.Parse(env.AuthURL); err == nil {
		host = u.Hostname()
	}
	var pairs []string
	for port, svc := range osPorts {
		target := &url.URL{Scheme: "http", Host: host + ":" + port}
		p.faults[svc] = simfault.New(simfault.Profile{})
		srv := httptest.NewServer(p.handler(svc, target))
		t.Cleanup(srv.Close)
		pairs = append(pairs, target.String(), srv.URL)
	}
	p.rewrite = strings.NewReplacer(pairs...)
	return p
}

// authURL is the proxied Keystone URL.
func (p *osProxy) authURL(real string) string { return p.rewrite.Replace(real) }

func (p *osProxy) handler(svc string, target *url.URL) http.Handler {
	rp := httputil.NewSingleHostReverseProxy(target)
	if svc == "keystone" {
		rp.ModifyResponse = p.rewriteCatalog
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.counts[svc+" "+r.Method]++
		p.mu.Unlock()
		if k, ok := p.faults[svc].Pick(svc + " " + r.Method); ok {
			simfault.Write(w, k, nil)
			return
		}
		rp.ServeHTTP(w, r)
	})
}

// rewriteCatalog points the catalog (and every other URL Keystone returns) at the proxies.
func (p *osProxy) rewriteCatalog(resp *http.Response) error {
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	body = []byte(p.rewrite.Replace(string(body)))
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return nil
}

// setFaults injects random faults into the named services' answers.
func (p *osProxy) setFaults(c simfault.Config, services ...string) {
	for _, s := range services {
		p.faults[s].SetFaults(c)
	}
}

// faultLog is every fault injected so far.
func (p *osProxy) faultLog() []string {
	var out []string
	for _, in := range p.faults {
		out = append(out, in.FaultLog()...)
	}
	return out
}

// take returns the requests since the last call as a total and "nova GET 12, …", and resets.
func (p *osProxy) take() (int, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	total, parts := 0, make([]string, 0, len(p.counts))
	for k, v := range p.counts {
		total += v
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(parts)
	p.counts = map[string]int{}
	return total, strings.Join(parts, ", ")
}
