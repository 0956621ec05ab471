package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/sim/keycloaksim"
	"github.com/waldur/site-agent/internal/sim/nodeemu"
	"github.com/waldur/site-agent/internal/sim/openstacksim"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/vaultsim"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

// rke2World is Waldur, OpenStack, Rancher, Vault and Keycloak simulators on loopback, and a
// node emulator playing every VM: once Nova shows a server ACTIVE, it reads the server's user
// data, logs in to Vault with the single-use secret id in it, reads the cluster token and
// registers the node with Rancher, as cloud-init and the system-agent would. The OpenStack
// side is a cloud: the simulator (newRKE2World) or the real one (rke2_realnova_test.go).
type rke2World struct {
	*env
	cloud    rke2Cloud
	cluster  string               // the cluster's name (order attribute name)
	os       *openstacksim.Server // nil on a real cloud
	rs       *ranchersim.Server
	rsURL    string
	vs       worldVault // the Vault simulator, or (tier 2) a real Vault core
	vsURL    string
	vaultTok string // the agent's Vault token
	kc       *keycloaksim.Server
	kcURL    string
	offering waldursim.Offering
	project  waldursim.Project
	reqs     *upstreamRequests // requests per simulator, the agent's apart from the node emulator's

	mu       sync.Mutex
	booted   map[string]bool // server ids the emulator has booted (or given up on)
	attempts map[string]int  // boot attempts per server id (an injected 5xx is retried)
	refused  []string        // emulator errors after the last attempt (e.g. a secret id used twice)

	bootstrap string     // backend_settings.bootstrap: rancher (default) or rke2
	extra     string     // more backend_settings lines (withSettings)
	rke2      *rke2Nodes // bootstrap rke2: the emulated RKE2 clusters (rke2_bootstrap_world_test.go)
	real      *realParts // tier 2: the scripts run, real Vault, etcd and Nodes (rke2_real_test.go)
}

const vaultRoot = "e2e-vault-root-token"

// rke2Option configures the world.
type rke2Option func(*rke2World)

// withBootstrap sets backend_settings.bootstrap; the node emulator plays that mode's VMs.
func withBootstrap(mode string) rke2Option { return func(w *rke2World) { w.bootstrap = mode } }

// withSettings adds backend_settings lines (unindented YAML).
func withSettings(lines string) rke2Option { return func(w *rke2World) { w.extra += lines } }

// rke2Cloud is the OpenStack side of an rke2World.
type rke2Cloud interface {
	// settings are the offering's backend_settings lines for it (image, server flavor, the
	// openstack block), unindented.
	settings() string
	// servers lists the servers the node emulator may boot, with their user data.
	servers() []cloudServer
	// poll is how often the node emulator lists the servers.
	poll() time.Duration
	// machine is what the server's kubelet finds: its flavor's vCPUs and RAM, its boot volume.
	machine(s cloudServer) nodeemu.Machine
}

// cloudServer is a Nova server as the node emulator and the tests see it.
type cloudServer struct {
	ID, Name, Status, UserData string
	FixedIPs                   []string // the addresses on the cluster network
	Deleting                   bool     // Nova accepted its deletion (task state "deleting")
	VCPUs, RAMMB               int      // its flavor's
}

// simCloud is the OpenStack simulator.
type simCloud struct {
	os    *openstacksim.Server
	url   string
	extra string // more lines of the openstack block (e.g. "tenant: per_cluster\n")
}

func (c simCloud) settings() string {
	o := c.os.Options()
	return fmt.Sprintf(`base_image_name: "cirros"
managed_rancher_server_flavor_name: "m1.large"
openstack:
  auth_url: %q
  username: %q
  password: %q
  project_name: %q
  region_name: %q
  external_network_name: %q
`, openstacksim.AuthURL(c.url), o.AdminUser, o.AdminPassword, o.AdminProject, o.Region, o.ExternalNetwork) + indent(c.extra, 2)
}

func (c simCloud) servers() []cloudServer {
	flavors := map[string]openstacksim.Flavor{}
	for _, f := range openstacksim.DefaultFlavors() {
		flavors[f.ID] = f
	}
	var out []cloudServer
	for _, s := range c.os.Servers() {
		f := flavors[s.FlavorID]
		out = append(out, cloudServer{ID: s.ID, Name: s.Name, Status: s.Status, UserData: s.UserData, FixedIPs: s.FixedIPs,
			Deleting: s.Deleting, VCPUs: f.VCPUs, RAMMB: f.RAMMB})
	}
	return out
}

func (c simCloud) machine(s cloudServer) nodeemu.Machine {
	m := nodeemu.Machine{CPUs: s.VCPUs, MemoryMiB: s.RAMMB}
	for _, v := range c.os.Servers() {
		for _, vol := range v.Volumes {
			if v.ID == s.ID && vol.Bootable {
				m.EphemeralGiB = vol.SizeGB
			}
		}
	}
	return m
}

func (simCloud) poll() time.Duration { return 20 * time.Millisecond }

func newRKE2World(t testing.TB, opts ...rke2Option) *rke2World {
	t.Helper()
	sim := openstacksim.New(openstacksim.Options{BuildDelay: 150 * time.Millisecond, DeleteDelay: 100 * time.Millisecond})
	sim.AddNamedImage("cirros")
	reqs := newUpstreamRequests()
	opts = append([]rke2Option{func(w *rke2World) { w.reqs = reqs }}, opts...)
	w := newRKE2WorldOn(t, simCloud{os: sim, url: serve(t, reqs.wrap("openstack", sim), false)}, rke2Cluster, opts...)
	w.os = sim
	return w
}

// newRKE2WorldOn is the world on a cloud, for a cluster of that name.
func newRKE2WorldOn(t testing.TB, cloud rke2Cloud, cluster string, opts ...rke2Option) *rke2World {
	t.Helper()
	w := &rke2World{cloud: cloud, cluster: cluster, booted: map[string]bool{}, attempts: map[string]int{}, bootstrap: "rancher"}
	for _, o := range opts {
		o(w)
	}
	if w.reqs == nil {
		w.reqs = newUpstreamRequests()
	}
	if realTier(t) {
		w.real = newRealParts(t)
	}
	w.rke2 = newRKE2Nodes(t, w.real)
	w.startRancherAndVault(t)
	w.kc = keycloaksim.New(keycloaksim.Options{})
	w.kcURL = serve(t, w.reqs.wrap("keycloak", w.kc), false)
	sim := waldursim.New(waldursim.Options{Token: scenario.Token})
	w.env = &env{t: t, sim: sim, url: serve(t, w.reqs.wrap("waldur", sim), false), dir: t.TempDir()}
	t.Cleanup(func() {
		if !t.Failed() {
			sim.AssertNoViolations(t)
			w.rs.AssertNoViolations(t)
		}
	})
	provider := sim.AddCustomer(waldursim.Customer{Name: "Tartu Cloud", Slug: "tartu-cloud"})
	sim.AddServiceProvider(waldursim.ServiceProvider{CustomerUUID: provider.UUID})
	customer := sim.AddCustomer(waldursim.Customer{Name: "Institute of Physics", Slug: "physics"})
	w.project = sim.AddProject(waldursim.Project{Name: "Dark Matter", Slug: "dark-matter", CustomerUUID: customer.UUID})
	comps := []waldursim.Component{
		{Type: "server_nodes", Name: "Server nodes", MeasuredUnit: "nodes", BillingType: "limit"},
		{Type: "worker_nodes", Name: "Worker nodes", MeasuredUnit: "nodes", BillingType: "limit"},
		{Type: "nodes", Name: "Nodes", MeasuredUnit: "nodes", BillingType: "usage"},
	}
	if w.real != nil { // the capacity the Nodes report (checkUsage)
		comps = append(comps, waldursim.Component{Type: "cpu", Name: "vCPU", MeasuredUnit: "cores", BillingType: "usage"},
			waldursim.Component{Type: "ram", Name: "RAM", MeasuredUnit: "GiB", BillingType: "usage"})
	}
	w.offering = sim.AddOffering(waldursim.Offering{Name: "Managed RKE2", CustomerUUID: provider.UUID, Components: comps,
		Plans: []waldursim.Plan{{Name: "Standard", Quotas: map[string]float64{"server_nodes": 3, "worker_nodes": 2}}}})
	for _, n := range []string{"alice", "bob"} { // the team: Waldur offering users that Keycloak knows
		wu := sim.AddUser(waldursim.User{Username: n, FullName: n + " Example", Email: n + "@physics.example"})
		sim.AddProjectMember(w.project.UUID, wu.UUID, "PROJECT.MEMBER")
		sim.AddOfferingUser(waldursim.OfferingUser{OfferingUUID: w.offering.UUID, UserUUID: wu.UUID, Username: n})
		w.kc.AddUser(n)
	}
	sim.SetCurrentUser(waldursim.User{Username: "site-agent", FullName: "Site Agent"},
		waldursim.Permission{RoleName: "CUSTOMER.OWNER", ScopeType: "customer", ScopeUUID: provider.UUID, ScopeName: provider.Name})
	w.writeConfig()
	go w.emulateNodes(t)
	return w
}

// startRancherAndVault starts the Rancher simulator and the Vault simulator, or in tier 2 the
// simulator in front of the real kube-apiserver and the real Vault core, with RKE2's
// managed-etcd controller on the Nodes.
func (w *rke2World) startRancherAndVault(t testing.TB) {
	o := ranchersim.Options{Seed: 3, NodeActiveAfter: 150 * time.Millisecond, DrainDuration: 150 * time.Millisecond,
		ProvisionDeleteDelay: 200 * time.Millisecond, RoleTemplates: []string{"cluster-member"}}
	if w.real == nil {
		w.rs = ranchersim.New(o)
		w.rs.SetEtcdRemover(w.rke2.removeMember)
		vs := vaultsim.New(vaultRoot, nil)
		w.vs, w.vaultTok, w.vsURL = vs, vaultRoot, serve(t, w.reqs.wrap("vault", vs), true)
		w.rsURL = serve(t, w.reqs.wrap("rancher", w.rs), true)
		return
	}
	o.Downstream = w.real.downstream()
	w.rs = ranchersim.New(o)
	w.rs.SetSystemAgentInstaller([]byte(nodeemu.StandIn(nodeemu.SystemAgentInstaller)))
	w.rsURL = serve(t, w.reqs.wrap("rancher", w.rs), true)
	w.vs, w.vaultTok = w.real.vault, w.real.vault.token
	w.vsURL = serve(t, w.reqs.wrap("vault", w.real.vault.proxy()), true)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	mc := nodeemu.RunMemberController(ctx, w.real.kube.Clientset, func(m string) (bool, error) { return w.rke2.removeMember("", m) }, 200*time.Millisecond)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("managed-etcd controller: %v; kubelets: %v", mc.Errors(), w.real.kubelets.Errors())
		}
	})
}

// serve starts h on loopback (TLS: a self-signed certificate, as the agent is told not to verify).
func serve(t testing.TB, h http.Handler, useTLS bool) string {
	t.Helper()
	var srv *httptest.Server
	if useTLS {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	return srv.URL
}

func (w *rke2World) writeConfig() { w.writeConfigOn(w.cloud) }

// writeConfigOn writes the configuration with cloud's settings (the same cloud with other
// openstack keys: w.cloud is not reassigned, the node emulator reads it meanwhile).
func (w *rke2World) writeConfigOn(cloud rke2Cloud) {
	cfg := fmt.Sprintf(`timezone: UTC
log_level: INFO
heartbeat_file: %s
vault:
  address: %q
  tls_skip_verify: true
  auth: {method: token, token: %q}
offerings:
  - name: "Managed RKE2"
    waldur_api_url: "%s/api/"
    waldur_api_token: "%s"
    waldur_offering_uuid: "%s"
    backend_type: rke2
    order_processing_backend: rke2
    membership_sync_backend: rke2
    reporting_backend: rke2
    backend_settings:
      bootstrap: %s
      backend_url: %q
      username: "%s"
      password: "%s"
      verify_cert: false
%s      managed_rancher_server_system_volume_size_gb: 64
      managed_rancher_worker_system_volume_size_gb: 64
%s
      keycloak_url: "%s/"
      keycloak_realm: waldur
      keycloak_username: admin
      keycloak_password: admin
    backend_components:
      server_nodes: {limit: 5, measured_unit: nodes, unit_factor: 1, accounting_type: limit, label: "Server nodes"}
      worker_nodes: {limit: 20, measured_unit: nodes, unit_factor: 1, accounting_type: limit, label: "Worker nodes"}
      nodes: {measured_unit: nodes, unit_factor: 1, accounting_type: usage, label: "Nodes"}
%s`, filepath.Join(w.dir, "heartbeat"), w.vsURL, w.vaultTok, w.url, scenario.Token, w.offering.UUID, w.bootstrap,
		w.rsURL, strings.Split(w.rs.Token(), ":")[0], strings.Split(w.rs.Token(), ":")[1], indent(w.extra+cloud.settings(), 6),
		indent(w.real.settings(), 6), w.kcURL, w.real.components())
	w.config = filepath.Join(w.dir, "config.yaml")
	if err := os.WriteFile(w.config, []byte(cfg), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// emulateNodes boots each ACTIVE server once, until the test ends.
func (w *rke2World) emulateNodes(t testing.TB) {
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // loopback simulators with self-signed certificates
	hc := &http.Client{Timeout: 5 * time.Second, Transport: nodeTransport{tr}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for ctx.Err() == nil {
		servers := w.cloud.servers()
		w.rke2.vmsGone(servers)
		for _, s := range servers {
			if s.Status != "ACTIVE" || w.seen(s.ID) {
				continue
			}
			if w.real != nil { // each VM boots at its own pace
				go w.bootOnce(ctx, hc, s)
				continue
			}
			if err := w.boot(ctx, hc, s); err != nil {
				w.mu.Lock()
				if w.attempts[s.ID]++; w.attempts[s.ID] < 20 {
					delete(w.booted, s.ID) // cloud-init's curl retries a failed request
				} else {
					w.refused = append(w.refused, s.Name+": "+err.Error())
				}
				w.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(w.cloud.poll()):
		}
	}
}

func (w *rke2World) seen(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.booted[id] {
		return true
	}
	w.booted[id] = true
	return false
}

// bootOnce runs a VM's cloud-init for real, once, as a VM does (tier 2).
func (w *rke2World) bootOnce(ctx context.Context, hc *http.Client, s cloudServer) {
	if err := w.bootScript(ctx, hc, s); err != nil && ctx.Err() == nil && w.exists(s.ID) {
		w.mu.Lock()
		w.refused = append(w.refused, s.Name+": "+err.Error())
		w.mu.Unlock()
	}
}

// boot does what the VM's cloud-init does.
func (w *rke2World) boot(ctx context.Context, hc *http.Client, s cloudServer) error {
	b, err := nodeemu.Parse([]byte(s.UserData))
	if err != nil {
		return err
	}
	if b.Mode == "rke2" {
		return w.rke2.boot(ctx, hc, w.vsURL, b, s)
	}
	token, err := b.Token(ctx, hc, w.vsURL)
	if err != nil {
		return err
	}
	if err := b.RegisterWithRancher(ctx, hc, token); err != nil {
		return err
	}
	return w.rke2.registered(b, s)
}
