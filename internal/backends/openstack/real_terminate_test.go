package openstack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	gos "github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"

	"github.com/waldur/site-agent/internal/failure"
)

// Terminate against the real services: a server group and a volume the tenant's user made are
// refused by name, then force_destroy removes them in one bounded pass. The loopback cloud has
// no Glance and no Octavia: a service missing from the catalog has nothing to clean up.
func TestRealTerminateCleansServerGroupsAndVolumes(t *testing.T) {
	r := loadReal(t)
	store := newMemSecrets()
	settings := map[string]any{"create_tenant_user": true, "credentials_path": "kv/site-agent/" + r.run}
	b := r.backend(t, backendOpts{secrets: store, settings: settings})
	res := realResource(r.run)(1)
	step(t, "create", func() { res = create(t, b.Backend, res, "leftovers") })
	t.Cleanup(func() {
		_ = r.backend(t, backendOpts{secrets: store, settings: map[string]any{"force_destroy": true}}).Delete(context.Background(), res)
	})
	creds, err := store.Get(ctxT(t), "kv/site-agent/"+r.run+"/sa-"+r.run+"-leftovers")
	if err != nil {
		t.Fatalf("tenant credentials: %v", err)
	}
	var group string
	step(t, "tenant user makes a server group and a volume", func() {
		group = r.createServerGroup(t, creds)
		r.createVolume(t, creds, 1)
	})
	step(t, "terminate refused, naming both kinds", func() {
		msg, ok := failure.PublicMessage(b.Delete(ctxT(t), res))
		if !ok || !strings.Contains(msg, "1 server group(s) and 1 volume(s)") || !strings.Contains(msg, "force_destroy") {
			t.Fatalf("want a refusal naming the server group and the volume, got %q", msg)
		}
	})
	settings["force_destroy"] = true
	step(t, "terminate with force_destroy", func() {
		start := time.Now()
		if err := r.backend(t, backendOpts{secrets: store, settings: settings}).Delete(ctxT(t), res); err != nil {
			t.Fatal(err)
		}
		t.Logf("one pass: %s", time.Since(start).Round(time.Millisecond))
	})
	sc := *r.compute
	if _, err := servergroups.Get(ctxT(t), &sc, group).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		t.Errorf("server group %s after terminate: %v, want 404", group, err)
	}
	r.checkGone(t, b, res, store, creds["username"])
}

// createServerGroup makes a server group in the tenant as its tenant user.
func (r *realEnv) createServerGroup(t *testing.T, creds map[string]string) string {
	t.Helper()
	p, err := gos.AuthenticatedClient(ctxT(t), gophercloud.AuthOptions{IdentityEndpoint: creds["auth_url"], Username: creds["username"],
		Password: creds["password"], DomainName: creds["user_domain_name"], Scope: &gophercloud.AuthScope{ProjectID: creds["project_id"]}})
	if err != nil {
		t.Fatalf("tenant user login: %v", err)
	}
	cc, err := gos.NewComputeV2(p, r.env.EndpointOpts())
	if err != nil {
		t.Fatal(err)
	}
	g, err := servergroups.Create(ctxT(t), cc, servergroups.CreateOpts{Name: "sa-test", Policies: []string{"anti-affinity"}}).Extract()
	if err != nil {
		t.Fatalf("create server group as tenant user: %v", err)
	}
	return g.ID
}
