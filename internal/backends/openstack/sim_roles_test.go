package openstack_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gophercloud/gophercloud/v2"
	gos "github.com/gophercloud/gophercloud/v2/openstack"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/openstack"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/openstacksim"
)

func TestTenantUserCredentialsGoToTheStoreOnly(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	store := newMemSecrets()
	var logs bytes.Buffer
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&logs), zap.DebugLevel))
	b := env.backend(t, backendOpts{secrets: store, log: log,
		settings: map[string]any{"create_tenant_user": true, "credentials_path": "secret/tenants/"}})
	res := resource(1)
	info, err := b.Create(ctxT(t), backends.CreateRequest{Resource: res, Name: "with-user"})
	if err != nil {
		t.Fatal(err)
	}
	res.BackendID = info.BackendID
	creds, err := store.Get(ctxT(t), "secret/tenants/wd-with-user")
	if err != nil {
		t.Fatalf("credentials not stored: %v (paths %v)", err, store.paths())
	}
	pw := creds["password"]
	if len(pw) < 20 || creds["username"] != "wd-with-user" || creds["project_id"] != info.BackendID {
		t.Fatalf("stored credentials incomplete: user %q project %q password length %d", creds["username"], creds["project_id"], len(pw))
	}
	if strings.Contains(logs.String(), pw) || strings.Contains(fmt.Sprint(info.Metadata), pw) {
		t.Fatal("the tenant password leaked into logs or metadata")
	}
	if info.Metadata["credentials_path"] != "secret/tenants/wd-with-user" || info.Metadata["tenant_username"] != "wd-with-user" {
		t.Errorf("metadata should name the credentials path and user: %v", info.Metadata)
	}
	loginAs(t, env, creds)
	// A second pass keeps the password; the tenant user is never a team member.
	create(t, b, res, "with-user")
	again, _ := store.Get(ctxT(t), "secret/tenants/wd-with-user")
	if again["password"] != pw {
		t.Fatal("a second create changed the stored password")
	}
	members, err := b.Members(ctxT(t), res)
	if err != nil || len(members) != 0 {
		t.Fatalf("members = %v, %v; the tenant user must not be listed", members, err)
	}
	if err := b.RemoveMembers(ctxT(t), res, []string{"wd-with-user"}); err != nil {
		t.Fatal(err)
	}
	if got := env.sim.Members(res.BackendID); !slices.Equal(got, []string{"wd-with-user"}) {
		t.Fatalf("tenant user lost its role: %v", got)
	}
	if err := b.Delete(ctxT(t), res); err != nil {
		t.Fatal(err)
	}
	if _, ok := env.sim.UserByName("wd-with-user"); ok || len(store.paths()) != 0 {
		t.Fatalf("delete left the tenant user or its secret (paths %v)", store.paths())
	}
}

// A user found without stored credentials (the store was wiped) gets a new password, so the
// store is right again.
func TestTenantUserPasswordIsResetWhenTheStoreLostIt(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	store := newMemSecrets()
	b := env.backend(t, backendOpts{secrets: store, settings: map[string]any{"create_tenant_user": true, "credentials_path": "kv/os"}})
	scrubbed := secret.Registered()
	res := create(t, b, resource(1), "wiped")
	_ = store.Delete(ctxT(t), "kv/os/wd-wiped")
	create(t, b, res, "wiped")
	creds, err := store.Get(ctxT(t), "kv/os/wd-wiped")
	if err != nil {
		t.Fatal(err)
	}
	loginAs(t, env, creds)
	// Generated passwords are scrubbed while the agent handles them, then leave the scrubber:
	// its set does not grow with every tenant user.
	if n := secret.Registered() - scrubbed; n != 0 {
		t.Errorf("the scrubber holds %d more values after two generated passwords, want 0", n)
	}
}

func loginAs(t *testing.T, env simEnv, creds map[string]string) {
	t.Helper()
	_, err := gos.AuthenticatedClient(ctxT(t), gophercloud.AuthOptions{IdentityEndpoint: creds["auth_url"],
		Username: creds["username"], Password: creds["password"], DomainName: creds["user_domain_name"],
		Scope: &gophercloud.AuthScope{ProjectID: creds["project_id"]}})
	if err != nil {
		t.Fatalf("tenant user cannot log in with the stored credentials: %v", err)
	}
}

func TestCreateTenantUserNeedsASecretStore(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	_, _, err := openstack.New(backends.Params{Settings: env.settings(map[string]any{"create_tenant_user": true, "credentials_path": "x"}),
		Components: testComps})
	if err == nil || !strings.Contains(err.Error(), "create_tenant_user") {
		t.Fatalf("want an error naming create_tenant_user, got %v", err)
	}
}

func TestMembersAreRoleAssignmentsAndMissingUsersAreSkipped(t *testing.T) {
	env := startSim(t, openstacksim.Options{ExtraDomains: []string{"Federated"}})
	b := env.backend(t, backendOpts{})
	res := create(t, b, resource(1), "team")
	err := b.AddMembers(ctxT(t), res, []backends.Member{{Username: "alice"}, {Username: "ghost"}, {Username: "bob"}})
	if err != nil {
		t.Fatalf("a missing user must not fail the pass: %v", err)
	}
	got, err := b.Members(ctxT(t), res)
	if err != nil || !slices.Equal(got, []string{"alice", "bob"}) {
		t.Fatalf("members = %v, %v", got, err)
	}
	if _, ok := env.sim.UserByName("ghost"); ok {
		t.Fatal("the backend created a user")
	}
	if err := b.RemoveMembers(ctxT(t), res, []string{"alice", "ghost"}); err != nil {
		t.Fatal(err)
	}
	if got := env.sim.Members(res.BackendID); !slices.Equal(got, []string{"bob"}) {
		t.Fatalf("after removing alice: %v", got)
	}
	if _, ok := env.sim.UserByName("alice"); !ok {
		t.Fatal("removing a member deleted the user")
	}
	// Users are looked up in user_domain only.
	fed := env.backend(t, backendOpts{settings: map[string]any{"user_domain": "Federated"}})
	if err := fed.AddMembers(ctxT(t), res, []backends.Member{{Username: "carol"}}); err != nil {
		t.Fatal(err)
	}
	if got := env.sim.Members(res.BackendID); slices.Contains(got, "carol") {
		t.Fatal("carol of the Default domain was added although user_domain is Federated")
	}
}

func TestUsageIsQuotaUsageInBackendUnits(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	b := env.backend(t, backendOpts{})
	a := create(t, b, resource(1), "a")
	c := create(t, b, resource(2), "c")
	env.sim.AddServer(a.BackendID, 2, 4096)
	env.sim.AddServer(a.BackendID, 1, 2048)
	env.sim.AddVolume(a.BackendID, 30)
	env.sim.AddFloatingIP(a.BackendID)
	got, err := b.Usage(ctxT(t), []backends.Resource{a, c, {UUID: "no-backend-id"}}, backends.Period{}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]backends.Usage{
		a.BackendID: {Total: backends.Quantities{"cores": 3, "ram": 6144, "storage": 30, "floating_ip": 1, "net": 1}},
		c.BackendID: {Total: backends.Quantities{"cores": 0, "ram": 0, "storage": 0, "floating_ip": 0, "net": 1}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	past, err := b.Usage(ctxT(t), []backends.Resource{a}, backends.Period{}, false)
	if err != nil || len(past) != 0 {
		t.Fatalf("past periods have no data: %v, %v", past, err)
	}
}

func TestPauseDownscaleRestore(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	b := env.backend(t, backendOpts{settings: map[string]any{"downscale_factor": 0.5}})
	res := create(t, b, resource(1), "status")
	env.sim.AddServer(res.BackendID, 1, 1024)
	env.sim.AddVolume(res.BackendID, 20)
	steps := []struct {
		name string
		do   func(context.Context, backends.Resource) error
		want map[string]map[string]int
	}{
		{"pause", b.Pause, map[string]map[string]int{"nova": {"cores": 0, "ram": 0}, "cinder": {"gigabytes": 20},
			"neutron": {"floatingip": 0, "network": 0}}},
		{"pause again", b.Pause, map[string]map[string]int{"nova": {"cores": 0}}},
		{"downscale", b.Downscale, map[string]map[string]int{"nova": {"cores": 2, "ram": 4096}, "cinder": {"gigabytes": 25},
			"neutron": {"floatingip": 1, "network": 1}}},
		{"restore", b.Restore, map[string]map[string]int{"nova": {"cores": 4, "ram": 8192}, "cinder": {"gigabytes": 50},
			"neutron": {"floatingip": 2, "network": 3}}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if err := st.do(ctxT(t), res); err != nil {
				t.Fatal(err)
			}
			checkQuotas(t, env.sim, res.BackendID, st.want)
			md, err := b.Metadata(ctxT(t), res)
			if err != nil {
				t.Fatal(err)
			}
			quotas, _ := md["quotas"].(map[string]any)
			if got, want := quotas["cores"], st.want["nova"]["cores"]; got != want {
				t.Errorf("metadata quotas %v: cores %v, want what OpenStack holds (%d)", quotas, got, want)
			}
		})
	}
	env.sim.ResetCalls()
	if err := b.Restore(ctxT(t), res); err != nil {
		t.Fatal(err)
	}
	if n := env.sim.TotalCalls(); n != 1 {
		t.Errorf("restore of an active tenant made %d calls, want 1: %v", n, env.sim.Calls())
	}
}

func TestUpdateWhilePausedKeepsTheTenantPaused(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	b := env.backend(t, backendOpts{})
	res := create(t, b, resource(1), "paused")
	if err := b.Pause(ctxT(t), res); err != nil {
		t.Fatal(err)
	}
	res.Limits = backends.Quantities{"cores": 8, "ram": 16384, "storage": 100, "floating_ip": 4, "net": 5}
	if err := b.SetLimits(ctxT(t), res, res.Limits); err != nil {
		t.Fatal(err)
	}
	checkQuotas(t, env.sim, res.BackendID, map[string]map[string]int{"nova": {"cores": 0}})
	if err := b.Restore(ctxT(t), res); err != nil {
		t.Fatal(err)
	}
	checkQuotas(t, env.sim, res.BackendID, map[string]map[string]int{"nova": {"cores": 8, "ram": 16384}, "cinder": {"gigabytes": 100}})
}
