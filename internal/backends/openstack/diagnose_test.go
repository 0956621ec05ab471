package openstack_test

import (
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/backendtest"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/sim/openstacksim"
)

func checksByName(cs []backends.Check) map[string]backends.Check {
	out := map[string]backends.Check{}
	for _, c := range cs {
		out[c.Name] = c
	}
	return out
}

func TestDiagnose(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	cases := []struct {
		name     string
		settings map[string]any
		failing  []string
	}{
		{"healthy", nil, nil},
		{"missing external network", map[string]any{"external_network": "nowhere"}, []string{"external network"}},
		{"missing role", map[string]any{"member_role": "_member_"}, []string{"member role"}},
		{"missing user domain", map[string]any{"user_domain": "Federated"}, []string{"user domain"}},
		{"wrong password", map[string]any{"password": "wrong-password"}, []string{"keystone authentication"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := env.backend(t, backendOpts{settings: tc.settings})
			checks := checksByName(backendtest.Checks(ctxT(t), b))
			var failing []string
			for name, c := range checks {
				if !c.OK {
					failing = append(failing, name)
				}
				if strings.Contains(c.Detail, env.sim.Options().AdminPassword) {
					t.Errorf("check %s shows the password", name)
				}
			}
			if strings.Join(failing, ",") != strings.Join(tc.failing, ",") {
				t.Fatalf("failing checks %v, want %v (all: %+v)", failing, tc.failing, checks)
			}
			if tc.failing == nil {
				for _, want := range []string{"catalog endpoints", "admin rights", "quota mapping"} {
					if _, ok := checks[want]; !ok {
						t.Errorf("no %q check", want)
					}
				}
				if d := checks["quota mapping"].Detail; !strings.Contains(d, "ram→nova.ram") || !strings.Contains(d, "net→neutron.network") {
					t.Errorf("quota mapping detail: %q", d)
				}
			}
		})
	}
}

const opTokenIssue = "keystone POST /v3/auth/tokens"

func TestPing(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	b := env.backend(t, backendOpts{})
	if err := b.Ping(ctxT(t)); err != nil {
		t.Fatalf("first ping (connects): %v", err)
	}
	env.sim.ResetCalls()
	if err := b.Ping(ctxT(t)); err != nil {
		t.Fatalf("second ping: %v", err)
	}
	if calls := env.sim.Calls(); calls["keystone HEAD /v3/auth/tokens"] != 1 || env.sim.TotalCalls() != 1 {
		t.Errorf("a ping of a connected backend validates the token once: %v", calls)
	}
	env.sim.ExpireTokens()
	if err := b.Ping(ctxT(t)); err != nil {
		t.Fatalf("ping after the token expired: %v", err)
	}
	env.sim.ResetCalls()
	if err := b.Ping(ctxT(t)); err != nil || env.sim.Calls()[opTokenIssue] != 0 {
		t.Fatalf("the renewed token must be valid: %v, %v", err, env.sim.Calls())
	}
	env.sim.SetDown("keystone", true)
	if err := b.Ping(ctxT(t)); !failure.IsTransient(err) {
		t.Fatalf("ping with Keystone down: want transient, got %v", err)
	}
	env.sim.SetDown("keystone", false)
	bad := env.backend(t, backendOpts{settings: map[string]any{"password": "nope-nope"}})
	err := bad.Ping(ctxT(t))
	if err == nil || failure.IsTransient(err) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("wrong password: want a permanent 401, got %v", err)
	}
}
