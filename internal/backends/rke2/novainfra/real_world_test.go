package novainfra_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/backends/rke2/novainfra"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/testenv/osenv"
)

// realWorld is novainfra on the real loopback OpenStack of scripts/openstack/up.sh --compute
// (Nova with the fake driver, Neutron, Cinder with the fake volume driver, Glance), with
// admin clients to check what it made, and a cluster of its own that the test's cleanup
// removes whatever happens.
type realWorld struct {
	t            *testing.T
	ctx          context.Context
	env          osenv.Env
	settings     rke2.Settings
	infra        *novainfra.Infra
	calls        *callCounter
	ref          rke2.ClusterRef
	*osenv.Admin // admin clients to check what novainfra made
}

func newRealWorld(t *testing.T) *realWorld { return newRealWorldWith(t, nil, nil) }

// newRealWorldWith adds top and osKeys to backend_settings and its openstack block.
func newRealWorldWith(t *testing.T, top, osKeys map[string]any) *realWorld {
	t.Helper()
	env := osenv.LoadCompute(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	w := &realWorld{t: t, ctx: ctx, env: env, calls: &callCounter{base: http.DefaultTransport, n: map[string]int{}}}
	w.ref = rke2.ClusterRef{UUID: randomHex(t, 16), Name: "nv" + randomHex(t, 3)}
	var warnings []string
	var err error
	in := realSettings(env)
	for k, v := range top {
		in[k] = v
	}
	for k, v := range osKeys {
		in["openstack"].(map[string]any)[k] = v
	}
	w.settings, warnings, err = rke2.DecodeSettings(in)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("settings: %v %v", err, warnings)
	}
	w.infra, err = novainfra.New(&w.settings, novainfra.Options{Transport: w.calls, Logger: zaptest.NewLogger(t),
		RetryWaitMin: 100 * time.Millisecond, RetryWaitMax: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.infra.Close() })
	if w.Admin, err = env.AdminClients(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.removeCluster)
	return w
}

func realSettings(env osenv.Env) map[string]any {
	return map[string]any{
		"backend_url": "https://rancher.invalid", "username": "token-test", "password": "unused",
		"base_image_name": env.Image, "managed_rancher_server_flavor_name": "m1.small",
		"vault_host": "vault.invalid", "vault_token": "unused", "allocate_floating_ip_to_all_nodes": true,
		"openstack": map[string]any{"auth_url": env.AuthURL, "username": env.Username, "password": env.Password,
			"user_domain_name": env.UserDomain, "project_name": env.ProjectName, "project_domain_name": env.ProjectDomain,
			"region_name": env.Region, "external_network_name": env.ExternalNetwork},
	}
}

// removeCluster deletes what is left of the test's cluster through novainfra itself: its
// servers (waiting until Nova has removed them), then the network chain.
func (w *realWorld) removeCluster() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for i := 0; ; i++ {
		left, err := w.infra.Servers(ctx, w.ref)
		if err == nil && len(left) == 0 {
			err = w.infra.TearDown(ctx, w.ref)
		}
		for _, s := range left {
			_ = w.infra.DeleteServer(ctx, w.ref, s)
		}
		if err == nil && len(left) == 0 {
			return
		}
		if ctx.Err() != nil {
			w.t.Errorf("cleanup of cluster %s: %v (servers left: %d)", w.ref.Name, err, len(left))
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waitFor polls cond every 200 ms until it holds or the timeout passes (failing the test).
func (w *realWorld) waitFor(what string, timeout time.Duration, cond func() (bool, error)) time.Duration {
	w.t.Helper()
	start := time.Now()
	var last error
	for time.Since(start) < timeout {
		ok, err := cond()
		if ok {
			return time.Since(start)
		}
		last = err
		time.Sleep(200 * time.Millisecond)
	}
	w.t.Fatalf("%s: not within %s (last error: %v)", what, timeout, last)
	return 0
}

// callCounter counts requests per upstream and method (under the retry layer: every attempt).
type callCounter struct {
	base http.RoundTripper
	mu   sync.Mutex
	n    map[string]int
}

var servicePorts = map[string]string{"5000": "keystone", "8774": "nova", "9696": "neutron", "8776": "cinder", "9292": "glance"}

func (c *callCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	svc := servicePorts[r.URL.Port()]
	if svc == "" {
		svc = r.URL.Host
	}
	c.mu.Lock()
	c.n[svc+" "+r.Method]++
	c.mu.Unlock()
	return c.base.RoundTrip(r)
}

// take returns the counts since the last call, as "total (nova GET 3, …)", and resets them.
func (c *callCounter) take() (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	total, parts := 0, make([]string, 0, len(c.n))
	for k, v := range c.n {
		total += v
		parts = append(parts, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(parts)
	c.n = map[string]int{}
	return total, strings.Join(parts, ", ")
}

func randomHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// userData renders the built-in cloud-init of a node, as the executor does (fake Vault
// credentials: nothing boots from it here).
func (w *realWorld) userData(name string, inv rke2.Inventory) rke2.UserData {
	spec := rke2.ClusterSpec{Name: w.ref.Name, Mode: rke2.ModeManaged, Servers: 1,
		ServerNodes: []rke2.NodeSpec{{Flavor: "m1.small"}}, AgentNodes: []rke2.NodeSpec{{Flavor: "m1.small"}}}
	ud, err := w.settings.CloudInit().Render(rke2.NewNodeConfig(&w.settings, &spec, name, inv,
		rke2.VaultCredentials{RoleID: "role-" + w.ref.UUID, SecretID: secret.New("secret-" + randomHex(w.t, 8))}, ""))
	if err != nil {
		w.t.Fatal(err)
	}
	return ud
}
