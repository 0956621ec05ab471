package vclusters

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// simManifest imports a cluster into a Rancher simulator with the tool's own client and returns
// the manifest Rancher hands out.
func simManifest(t *testing.T) ([]byte, string) {
	t.Helper()
	sim, srv := rancherSim(t)
	cfg := testConfig(t, srv.URL, sim.Token())
	rc, err := newRancherClient(cfg.Rancher, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cl, err := rc.EnsureCluster(ctx, "vc-manifest", "")
	if err != nil {
		t.Fatal(err)
	}
	again, err := rc.EnsureCluster(ctx, "vc-manifest", "")
	if err != nil || again.ID != cl.ID {
		t.Fatalf("second EnsureCluster: %s %v, want the same %s", again.ID, err, cl.ID)
	}
	reg, err := rc.Registration(ctx, cl.ID)
	if err != nil {
		t.Fatal(err)
	}
	posts := sim.Calls()["crt.create"]
	reg2, err := rc.Registration(ctx, cl.ID)
	if err != nil || reg2.Token.Reveal() != reg.Token.Reveal() || sim.Calls()["crt.create"] != posts {
		t.Fatalf("second Registration made another: %v", err)
	}
	data, err := rc.Manifest(ctx, reg.ManifestURL)
	if err != nil {
		t.Fatal(err)
	}
	if c := sim.Calls(); c["cluster.create"] != 1 {
		t.Errorf("rancher calls %v: the cluster must be created once", c)
	}
	return data, reg.Token.Reveal()
}

func TestManifestIsScopedToTheTenant(t *testing.T) {
	data, token := simManifest(t)
	rec := Record{Name: "vc-manifest", ID: "vc-1"}
	m, err := transformManifest(data, rec)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, obj := range m.objects {
		switch o := obj.(type) {
		case *corev1.ServiceAccount:
			kinds = append(kinds, "sa:"+o.Namespace+"/"+o.Name)
		case *corev1.Secret:
			kinds = append(kinds, "secret:"+o.Namespace)
			if string(o.Data["token"]) != token || !strings.HasPrefix(string(o.Data["url"]), "https://") {
				t.Errorf("credentials secret data %v", o.Data)
			}
			if o.Labels[LabelLogicalCluster] != "vc-manifest" {
				t.Errorf("credentials secret not labelled: %v", o.Labels)
			}
		case *rbacv1.ClusterRole:
			kinds = append(kinds, "clusterrole:"+o.Name)
		case *rbacv1.ClusterRoleBinding:
			kinds = append(kinds, "crb:"+o.Name)
			if o.Name == adminBindingName("vc-manifest") && (o.Subjects[0].Namespace != "cluster-vc-manifest" || o.RoleRef.Name != "cattle-admin") {
				t.Errorf("admin binding %+v", o)
			}
		default:
			t.Errorf("unexpected %T", obj)
		}
	}
	want := "clusterrole:proxy-clusterrole-kubeapiserver crb:proxy-role-binding-kubernetes-master sa:cluster-vc-manifest/cattle " +
		"crb:cattle-admin-binding-vc-manifest secret:cluster-vc-manifest clusterrole:cattle-admin"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("applied objects:\n %s\nwant\n %s", got, want)
	}
	if !strings.HasPrefix(m.credentials, "cattle-credentials-") {
		t.Errorf("credentials secret %q", m.credentials)
	}
	if got := fmt.Sprint(m.skipped); !strings.Contains(got, "Namespace/cattle-system") || !strings.Contains(got, "Deployment/cattle-cluster-agent") ||
		!strings.Contains(got, "Service/cattle-cluster-agent") {
		t.Errorf("skipped %v", m.skipped)
	}
}

func TestManifestWithoutCredentialsIsRefused(t *testing.T) {
	if _, err := transformManifest([]byte("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: cattle, namespace: cattle-system}\n"), Record{Name: "x"}); err == nil {
		t.Error("a manifest without cattle-credentials was accepted")
	}
	if _, err := transformManifest([]byte("kind: [\n"), Record{Name: "x"}); err == nil {
		t.Error("broken YAML accepted")
	}
}
