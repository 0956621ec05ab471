package rancher

import (
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
)

func registrySecret(password string) SecretSpec {
	return SecretSpec{Namespace: "fleet-default", Name: "rke2-registry-u1", Type: "kubernetes.io/basic-auth",
		Labels: map[string]string{"rke2.site-agent.waldur.com/cluster": "u1"},
		Data:   map[string]secret.Secret{"username": secret.New("puller"), "password": secret.New(password)}}
}

// EnsureSecret creates once, leaves an equal secret alone, replaces a changed one (keeping its
// type through Steve's "_type"), survives a create whose answer was lost, and never shows the
// data in an error; DeleteSecret is idempotent.
func TestEnsureSecret(t *testing.T) {
	w := newWorld(t, ranchersim.Options{})
	ctx := ctxT(t)
	w.sim.FailNext("secret.create", 1, ranchersim.FaultLoseResponse)
	if err := w.c.EnsureSecret(ctx, registrySecret("first-password")); !failure.IsTransient(err) {
		t.Fatalf("a create whose answer was lost: %v, want a transient error (a POST is not sent twice)", err)
	}
	if err := w.c.EnsureSecret(ctx, registrySecret("first-password")); err != nil {
		t.Fatalf("ensure after a lost create: %v", err)
	}
	if err := w.c.EnsureSecret(ctx, registrySecret("first-password")); err != nil {
		t.Fatal(err)
	}
	calls := w.sim.Calls()
	if calls["secret.create"] != 1 || calls["secret.update"] != 0 {
		t.Fatalf("calls %v: want one create and no update", calls)
	}
	if err := w.c.EnsureSecret(ctx, registrySecret("rotated-password")); err != nil {
		t.Fatalf("rotate: %v", err)
	}
	got := w.sim.Secrets()
	if len(got) != 1 || got[0].Type != "kubernetes.io/basic-auth" || got[0].Data["password"] != "rotated-password" ||
		got[0].Data["username"] != "puller" || got[0].Labels["rke2.site-agent.waldur.com/cluster"] != "u1" {
		t.Fatalf("secrets %+v", got)
	}
	if w.sim.Calls()["secret.update"] != 1 {
		t.Fatalf("calls %v: want one update", w.sim.Calls())
	}
	other := registrySecret("x")
	other.Type = "Opaque"
	err := w.c.EnsureSecret(ctx, other)
	if err == nil || !strings.Contains(err.Error(), `is of type "kubernetes.io/basic-auth"`) {
		t.Fatalf("a secret of another type: %v", err)
	}
	w.sim.FailNext("secret.update", 1, ranchersim.Fault500)
	err = w.c.EnsureSecret(ctx, registrySecret("third-password"))
	if err != nil && (strings.Contains(err.Error(), "third-password") || strings.Contains(err.Error(), "dGhpcmQtcGFzc3dvcmQ")) {
		t.Fatalf("an error shows the data: %v", err)
	}
	for i := 0; i < 2; i++ {
		if err := w.c.DeleteSecret(ctx, "fleet-default", "rke2-registry-u1"); err != nil {
			t.Fatalf("delete %d: %v", i, err)
		}
	}
	if len(w.sim.Secrets()) != 0 {
		t.Fatal("the secret is left")
	}
}
