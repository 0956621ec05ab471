package rancher

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/upstream"
)

// The cluster proxy configuration: Rancher's /k8s/clusters/<id> on the configured URL with the
// API key and TLS settings, and retries by the kubernetes settings (the simulator answers 503
// without a Kubernetes behind it: one retry is two attempts).
func TestClusterProxy(t *testing.T) {
	w := newWorld(t, ranchersim.Options{})
	c, err := New(Config{URL: w.srv.URL + "/", Token: secret.New(w.sim.Token()), TLS: TLS{Insecure: true}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	one := 1
	rc := c.ClusterProxy(cluster, upstream.Settings{Retries: &one, BackoffMin: time.Millisecond, BackoffMax: time.Millisecond, Timeout: 7 * time.Second})
	if rc.Host != w.srv.URL+"/k8s/clusters/"+cluster || rc.BearerToken != w.sim.Token() || !rc.Insecure || rc.Timeout != 7*time.Second {
		t.Fatalf("config host %s, timeout %s, insecure %v", rc.Host, rc.Timeout, rc.Insecure)
	}
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(rc.Host + "/version")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || w.sim.Calls()["k8s.GET"] != 2 {
		t.Fatalf("status %d after %d attempts, want 503 after 2", resp.StatusCode, w.sim.Calls()["k8s.GET"])
	}
	if _, err := New(Config{URL: w.srv.URL, TLS: TLS{CAData: []byte("not PEM")}}, nil); err == nil {
		t.Fatal("a CA bundle without certificates was accepted")
	}
	for _, bad := range []string{"rancher.example", "ftp://rancher.example", "https://u:p@rancher.example", "https://r.example/?a=1"} {
		if _, err := New(Config{URL: bad}, nil); err == nil || errors.Is(err, nil) {
			t.Errorf("URL %q accepted", bad)
		}
	}
}

// Denied asks one SelfSubjectAccessReview per permission through the proxy of the cluster named
// (the simulator answers those of Rancher's own cluster `local` for its administrator key).
func TestDeniedAsksAReviewEach(t *testing.T) {
	w := newWorld(t, ranchersim.Options{})
	want := []Access{{Verb: "create", Group: "provisioning.cattle.io", Resource: "clusters", Namespace: "fleet-default"},
		{Verb: "list", Resource: "namespaces"}}
	denied, err := w.c.Denied(ctxT(t), "local", want)
	if err != nil || len(denied) != 0 {
		t.Fatalf("denied %v %v", denied, err)
	}
	if got := w.sim.Calls()["k8s.POST"]; got != 2 {
		t.Fatalf("%d reviews, want 2", got)
	}
	if s := want[0].String(); s != "create clusters.provisioning.cattle.io in fleet-default" {
		t.Fatalf("%q", s)
	}
	if _, err := w.c.Denied(ctxT(t), "c-m-nothere", want); err == nil {
		t.Fatal("a cluster Rancher does not know")
	}
}
