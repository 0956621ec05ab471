package rancher

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
)

// Import, as the virtual-clusters tool does it: the cluster is made once, its registration token
// once (though Rancher answers 404 until it has made the cluster's namespace), and the manifest
// is fetched without the API key.
func TestImportRegistration(t *testing.T) {
	w := newWorld(t, ranchersim.Options{NamespaceDelay: 300 * time.Millisecond})
	core, logs := observer.New(zapcore.DebugLevel)
	w.c.log = zap.New(core)
	w.c.pol.WaitMin, w.c.pol.WaitMax = 50*time.Millisecond, 100*time.Millisecond // 8 retries outlast the namespace's 300 ms
	ctx := ctxT(t)
	cl, err := w.c.EnsureCluster(ctx, "vc-1", "virtual cluster")
	if err != nil || !strings.HasPrefix(cl.ID, "c-") || cl.State != "pending" {
		t.Fatalf("cluster %+v %v", cl, err)
	}
	if again, err := w.c.EnsureCluster(ctx, "vc-1", ""); err != nil || again.ID != cl.ID {
		t.Fatalf("second EnsureCluster: %+v %v, want %s", again, err, cl.ID)
	}
	reg, err := w.c.Registration(ctx, cl.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.sim.Calls()["crt.create"]; got < 2 {
		t.Fatalf("%d registration token POSTs: the simulator's 404 for the missing namespace was not met", got)
	}
	if logs.FilterMessageSnippet("namespace yet").Len() == 0 {
		t.Error("the namespace's 404 was not logged")
	}
	reg2, err := w.c.Registration(ctx, cl.ID)
	if err != nil || reg2.Token.Reveal() != reg.Token.Reveal() || reg2.ManifestURL.Reveal() != reg.ManifestURL.Reveal() {
		t.Fatalf("second Registration made another token: %v", err)
	}
	if want := w.srv.URL + "/v3/import/" + reg.Token.Reveal() + "_" + cl.ID + ".yaml"; reg.ManifestURL.Reveal() != want {
		t.Fatalf("manifest URL %q, want %q", reg.ManifestURL.Reveal(), want)
	}
	data, err := w.c.Manifest(ctx, reg.ManifestURL)
	if err != nil || !strings.Contains(string(data), "cattle-credentials") {
		t.Fatalf("manifest: %v", err)
	}
	ids, err := w.c.Clusters(ctx)
	if err != nil || len(ids) != 2 {
		t.Fatalf("clusters %+v %v", ids, err)
	}
	for range 2 {
		if err := w.c.DeleteCluster(ctx, cl.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// While the namespace is missing past the retries, Registration is not ready (transient), not
// a failure, and nothing was made; the next call succeeds.
func TestRegistrationWaitsForTheNamespace(t *testing.T) {
	w := newWorld(t, ranchersim.Options{NamespaceDelay: 300 * time.Millisecond})
	ctx := ctxT(t)
	cl, err := w.c.EnsureCluster(ctx, "vc-slow", "")
	if err != nil {
		t.Fatal(err)
	}
	w.c.pol.Max, w.c.pol.WaitMin, w.c.pol.WaitMax = 2, time.Millisecond, time.Millisecond
	_, err = w.c.Registration(ctx, cl.ID)
	if !errors.Is(err, failure.ErrNotReady) || !failure.IsTransient(err) || errors.Is(err, failure.ErrNotFound) {
		t.Fatalf("want not ready (and not 'not found'), got %v", err)
	}
	if got := w.sim.Calls()["crt.create"]; got != 3 {
		t.Fatalf("%d POSTs, want 3 (retries: 2)", got)
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := w.c.Registration(ctx, cl.ID); err != nil {
		t.Fatal(err)
	}
	// Another 404 (no such cluster) is not mistaken for a missing namespace.
	if _, err := w.c.Registration(ctx, "c-nothere"); errors.Is(err, failure.ErrNotReady) {
		t.Fatalf("unknown cluster: %v", err)
	}
}

// Issue 16: Rancher answers a registration token's create without its manifest URL (its status
// controller fills it a moment later). Registration reads the tokens again until the URL is
// there — once, without a second POST — and is not ready (transient) while it takes longer.
func TestRegistrationWaitsForTheManifestURL(t *testing.T) {
	w := newWorld(t, ranchersim.Options{ControllerDelay: 200 * time.Millisecond})
	ctx := ctxT(t)
	cl, err := w.c.EnsureCluster(ctx, "vc-status", "")
	if err != nil {
		t.Fatal(err)
	}
	w.c.pol.Max, w.c.pol.WaitMin, w.c.pol.WaitMax = 1, time.Millisecond, time.Millisecond
	time.Sleep(60 * time.Millisecond) // past the namespace's delay
	if _, err = w.c.Registration(ctx, cl.ID); !errors.Is(err, failure.ErrNotReady) || !failure.IsTransient(err) {
		t.Fatalf("want not ready while the status is missing, got %v", err)
	}
	w.c.pol.Max, w.c.pol.WaitMin, w.c.pol.WaitMax = 8, 20*time.Millisecond, 100*time.Millisecond
	reg, err := w.c.Registration(ctx, cl.ID)
	if err != nil || reg.Token.IsZero() || !strings.HasSuffix(reg.ManifestURL.Reveal(), "/v3/import/"+reg.Token.Reveal()+"_"+cl.ID+".yaml") {
		t.Fatalf("registration %v, manifest URL set %v", err, !reg.ManifestURL.IsZero())
	}
	if got := w.sim.Calls()["crt.create"]; got != 1 {
		t.Fatalf("%d POSTs, want 1", got)
	}
}

// A manifest that cannot be fetched gives an error without the token in the URL.
func TestManifestErrorsDoNotShowTheToken(t *testing.T) {
	w := newWorld(t, ranchersim.Options{})
	srv := httptest.NewServer(nil)
	srv.Close()
	c := w.client(t, srv.URL, fast(1))
	_, err := c.Manifest(context.Background(), secret.New(srv.URL+"/v3/import/sekrettoken_c-1.yaml"))
	if err == nil || strings.Contains(err.Error(), "sekrettoken") || !failure.IsTransient(err) {
		t.Fatalf("error %v", err)
	}
	_, err = c.Manifest(context.Background(), secret.New("ftp://elsewhere/v3/import/sekrettoken_c-1.yaml"))
	if err == nil || strings.Contains(err.Error(), "sekrettoken") || failure.IsTransient(err) {
		t.Fatalf("refused link: %v", err)
	}
}
