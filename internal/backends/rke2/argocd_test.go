package rke2

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// memArgo is an ArgoCD instance in memory: secrets by UUID, with the registry's contract
// (mint only when absent). The real registry (package argocd) is tested against a real
// kube-apiserver.
type memArgo struct {
	mu      sync.Mutex
	secrets map[string]memArgoSecret
	fail    int // the next n calls fail transiently
}

type memArgoSecret struct {
	name, server, token string
	longhorn            bool
}

func (a *memArgo) Ensure(ctx context.Context, c ArgoCluster, mint func(context.Context) (Kubeconfig, error)) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fail > 0 {
		a.fail--
		return failure.Transient(fmt.Errorf("argocd: 503"))
	}
	if s, ok := a.secrets[c.UUID]; ok {
		s.longhorn = c.Longhorn
		a.secrets[c.UUID] = s
		return nil
	}
	kc, err := mint(ctx)
	if err != nil {
		return err
	}
	a.secrets[c.UUID] = memArgoSecret{name: c.Name, server: kc.Server, token: kc.Token.Reveal(), longhorn: c.Longhorn}
	return nil
}

func (a *memArgo) Remove(_ context.Context, uuid string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.secrets, uuid)
	return nil
}

func (a *memArgo) Check(context.Context) backends.Check {
	return backends.Check{Name: "argocd", OK: true}
}

// TestArgoCDRegistration: a ready cluster is registered with ArgoCD once (one kubeconfig, so
// one Rancher token, however many passes follow), with the Longhorn label when the order asks
// for Longhorn; an ArgoCD outage keeps the order executing; terminate removes the secret.
func TestArgoCDRegistration(t *testing.T) {
	w := newMemWorld(t, 1)
	argo := &memArgo{secrets: map[string]memArgoSecret{}, fail: 2}
	backend := func() *Backend {
		b := memBackend(t, w)
		b.d.ArgoCD = argo
		return b
	}
	res := clusterResource(1, 1)
	res.Attributes = managedOrder("install_longhorn", true, "worker_nodes_longhorn_volume_size", 102400.0)
	var info backends.Info
	cyclesUntilDone(t, w, "create", func() error {
		var err error
		info, err = backend().Create(context.Background(), backends.CreateRequest{Resource: res})
		res.BackendID = info.BackendID
		return err
	})
	for range 3 { // later passes (scaling, restarts) keep the registration, mint nothing
		if _, err := backend().Create(context.Background(), backends.CreateRequest{Resource: res}); err != nil {
			t.Fatal(err)
		}
	}
	got, ok := argo.secrets[testCluster]
	if !ok || got.name != "prod" || !got.longhorn || got.token == "" {
		t.Fatalf("argocd secret %+v (present %v)", got, ok)
	}
	if n := w.calls["Kubeconfig"]; n != 1 {
		t.Fatalf("%d kubeconfigs minted, want 1", n)
	}
	w.terminating[testCluster] = true
	cyclesUntilDone(t, w, "terminate", func() error { return backend().Delete(context.Background(), res) })
	if len(argo.secrets) != 0 {
		t.Fatalf("argocd secrets left: %v", argo.secrets)
	}
}
