package assembly

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends/rke2"
	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
	"github.com/waldur/site-agent/internal/failure"
)

// observation is what the rke2 backend reads from Rancher on the way of one cluster, up to where
// a real node would start (no node ever joins), in a form that does not depend on the server:
// ids, states and error classes, the shapes of the token, the manifest URL and the kubeconfig.
// The same calls against the simulator and the real Rancher must give the same observation
// (TestSimulatorAnswersLikeRealRancher).
type observation struct {
	CreateAnswerHasManagementID bool   // the create answer names the management cluster already
	CreateState                 string // the cluster's state in the create answer
	DuplicateName               string // another resource's Ensure of the name: the error class
	RegistrationBeforeID        string // Registration without a management id: the error class
	ManagementIDShape           string // c-m-<8 lower-case letters or digits>
	StateWithID                 string // the state once the management id is there (no node)
	TokenShape                  string // the registration token: length and alphabet
	SameTokenTwice              bool   // a second Registration answers the same token
	ManifestURLShape            string // <url>/v3/import/<token>_<management id>.yaml
	ManifestIsAgent             bool   // the manifest deploys cattle-cluster-agent (rke2 mode)
	Nodes                       int
	Capacity                    rke2.Capacity
	KubeconfigServer            string // <url>/k8s/clusters/<management id>
	KubeconfigToken             string // its shape
	GroupBound                  string // BindGroup twice, then the cluster's bindings of the principal
	GroupUnbound                string // after UnbindGroups
	DeleteFirst                 string // the first DeleteCluster: the error class
	DeletedWithin               bool   // the cluster was gone within the bound
	ReadAfterDelete             string // Cluster after it went: the error class
}

// errClass names an error by what the backend distinguishes.
func errClass(err error) string {
	switch {
	case err == nil:
		return "nil"
	case errors.Is(err, failure.ErrDuplicate):
		return "duplicate"
	case errors.Is(err, failure.ErrNotReady):
		return "not ready"
	case errors.Is(err, failure.ErrNotFound):
		return "not found"
	case failure.IsTransient(err):
		return "transient"
	}
	return "error: " + err.Error()
}

var (
	mgmtIDRe = regexp.MustCompile(`^c-m-[a-z0-9]{8}$`)
	tokenRe  = regexp.MustCompile(`^[bcdfghjklmnpqrstvwxz2-9]{54}$`) // Rancher's rand.String alphabet
)

// world is one Rancher, simulated or real, as observe drives it.
type world struct {
	port rancherPort
	c    *rancherapi.Client
	base string // the Rancher URL the port is configured with
	// crtbs lists the cluster role template bindings of a principal on a cluster (as "role").
	crtbs func(t *testing.T, clusterID, principal string) []string
}

// observe drives the port through one cluster's life, up to where a node would start, and
// deletes it again.
func observe(t *testing.T, w world, ref rke2.ClusterRef, spec rke2.ProvisionSpec, deadline time.Duration) observation {
	t.Helper()
	ctx := t.Context()
	var o observation
	rc, err := w.port.EnsureCluster(ctx, ref, spec)
	if err != nil {
		t.Fatalf("ensure %s: %v", ref.Name, err)
	}
	t.Cleanup(func() { _ = w.port.DeleteCluster(context.Background(), ref) })
	o.CreateAnswerHasManagementID, o.CreateState = rc.ManagementID != "", rc.State
	_, err = w.port.EnsureCluster(ctx, rke2.ClusterRef{UUID: "ffff" + ref.UUID[4:], Name: ref.Name}, spec)
	o.DuplicateName = errClass(err)
	_, err = w.port.Registration(ctx, rke2.RancherCluster{Name: ref.Name})
	o.RegistrationBeforeID = errClass(err)
	poll(t, deadline, "the management id of "+ref.Name, func() bool {
		rc, err = w.port.Cluster(ctx, ref)
		return err == nil && rc.ManagementID != ""
	})
	o.ManagementIDShape = shape(mgmtIDRe, rc.ManagementID, "c-m-<8>")
	o.StateWithID = rc.State
	reg := registrationOf(t, w.port, rc, deadline)
	o.TokenShape = shape(tokenRe, reg.Token.Reveal(), "54 of Rancher's alphabet")
	again := registrationOf(t, w.port, rc, deadline)
	o.SameTokenTwice = again.Token.Reveal() == reg.Token.Reveal()
	o.ManifestURLShape = strings.NewReplacer(w.base, "<url>", reg.Token.Reveal(), "<token>", rc.ManagementID, "<id>").Replace(reg.ManifestURL.Reveal())
	if spec.Imported {
		manifest, err := w.c.Manifest(ctx, reg.ManifestURL)
		if err != nil {
			t.Fatalf("manifest: %v", err)
		}
		o.ManifestIsAgent = strings.Contains(string(manifest), "name: cattle-cluster-agent") && strings.Contains(string(manifest), "kind: Deployment")
	}
	nodes, err := w.port.Nodes(ctx, rc)
	if err != nil {
		t.Fatalf("nodes: %v", err)
	}
	o.Nodes = len(nodes)
	if o.Capacity, err = w.port.Capacity(ctx, rc); err != nil {
		t.Fatalf("capacity: %v", err)
	}
	kc, err := w.port.Kubeconfig(ctx, rc)
	if err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	o.KubeconfigServer = strings.NewReplacer(w.base, "<url>", rc.ManagementID, "<id>").Replace(kc.Server)
	o.KubeconfigToken = shape(regexp.MustCompile(`^kubeconfig-[a-z0-9-]+:[a-z0-9]{20,}$`), kc.Token.Reveal(), "kubeconfig-<user>:<secret>")
	o.GroupBound, o.GroupUnbound = bindings(t, w, rc)
	o.DeleteFirst = errClass(w.port.DeleteCluster(ctx, ref))
	o.DeletedWithin = pollOK(deadline, func() bool { return w.port.DeleteCluster(ctx, ref) == nil })
	_, err = w.port.Cluster(ctx, ref)
	o.ReadAfterDelete = errClass(err)
	return o
}

// bindings binds a group to the cluster twice and unbinds it, reading the cluster's role
// template bindings after each.
func bindings(t *testing.T, w world, rc rke2.RancherCluster) (bound, unbound string) {
	t.Helper()
	const principal = "keycloakoidc_group://observe_owners"
	for range 2 {
		if err := w.port.BindGroup(t.Context(), rc, principal, "cluster-owner"); err != nil {
			t.Fatalf("bind: %v", err)
		}
	}
	bound = strings.Join(w.crtbs(t, rc.ManagementID, principal), ",")
	if err := w.port.UnbindGroups(t.Context(), rc, []string{principal}); err != nil {
		t.Fatalf("unbind: %v", err)
	}
	return bound, strings.Join(w.crtbs(t, rc.ManagementID, principal), ",")
}

// registrationOf waits out Rancher's not-ready answers (the cluster's namespace comes a moment
// after the cluster; the backend's next pass would ask again).
func registrationOf(t *testing.T, c rancherPort, rc rke2.RancherCluster, deadline time.Duration) rke2.Registration {
	t.Helper()
	var reg rke2.Registration
	poll(t, deadline, "the registration token", func() bool {
		var err error
		reg, err = c.Registration(t.Context(), rc)
		if err != nil && !errors.Is(err, failure.ErrNotReady) && !failure.IsTransient(err) {
			t.Fatal(err)
		}
		return err == nil
	})
	return reg
}

func shape(re *regexp.Regexp, s, name string) string {
	if re.MatchString(s) {
		return name
	}
	return "unexpected: " + s
}

func poll(t *testing.T, deadline time.Duration, what string, cond func() bool) {
	t.Helper()
	if !pollOK(deadline, cond) {
		t.Fatalf("timed out after %s waiting for %s", deadline, what)
	}
}

func pollOK(deadline time.Duration, cond func() bool) bool {
	for start := time.Now(); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > deadline {
			return false
		}
	}
	return true
}
