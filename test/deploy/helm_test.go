package deploy

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

var chart = filepath.Join("..", "..", "charts", "site-agent")

func helm(t *testing.T) string {
	return need(t, "SITE_AGENT_HELM", "build it with scripts/helm/build.sh")
}

// render runs helm template and decodes the manifests.
func render(t *testing.T, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out := must(t, helm(t), append([]string{"template", "agent", chart, "--namespace", "site-agent"}, args...)...)
	return decode(t, out)
}

func decode(t *testing.T, text string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewBufferString(text), 4096)
	for {
		var m map[string]any
		err := d.Decode(&m)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("rendered manifests do not decode: %v", err)
		}
		if m != nil {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}

func find(objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind {
			return o
		}
	}
	return nil
}

func kinds(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind())
	}
	slices.Sort(out)
	return out
}

func typed[T any](t *testing.T, o *unstructured.Unstructured) *T {
	t.Helper()
	if o == nil {
		t.Fatal("object missing from the rendered chart")
	}
	var v T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, &v, true); err != nil {
		t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
	}
	return &v
}

func TestHelmLintStrict(t *testing.T) {
	h := helm(t)
	must(t, h, "lint", "--strict", chart)
	must(t, h, "lint", "--strict", chart, "--values", filepath.Join(chart, "ci", "ha-values.yaml"))
}

// TestHelmDefaults: one replica running -m all from the Secret, non-root, read-only, probes on
// the metrics port, no Kubernetes API access.
func TestHelmDefaults(t *testing.T) {
	objs := render(t)
	if got := strings.Join(kinds(objs), ","); got != "Deployment,Secret,Service" {
		t.Fatalf("rendered kinds %s, want Deployment, Secret, Service", got)
	}
	d := typed[appsv1.Deployment](t, find(objs, "Deployment"))
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	if *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("replicas %d strategy %s, want 1 and Recreate", *d.Spec.Replicas, d.Spec.Strategy.Type)
	}
	if got := strings.Join(c.Args, " "); got != "--mode all --config-file /etc/waldur-site-agent/config.yaml --listen 0.0.0.0:9560" {
		t.Errorf("args %q", got)
	}
	sc := c.SecurityContext
	if sc == nil || !*sc.ReadOnlyRootFilesystem || !*sc.RunAsNonRoot || *sc.RunAsUser != 65532 || *sc.AllowPrivilegeEscalation {
		t.Errorf("container security context %+v", sc)
	}
	if c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe.HTTPGet.Port.String() != "metrics" {
		t.Errorf("probes %+v %+v", c.LivenessProbe, c.ReadinessProbe)
	}
	if *pod.AutomountServiceAccountToken {
		t.Error("without leader election the pod needs no Kubernetes API token")
	}
	secret := find(objs, "Secret")
	if data, _, _ := unstructured.NestedMap(secret.Object, "data"); data["config.yaml"] == nil || pod.Volumes[0].Secret.SecretName != secret.GetName() {
		t.Errorf("config.yaml must come from the chart's Secret: %v, volumes %+v", data, pod.Volumes)
	}
}

// TestHelmExecProbes: healthCheck.type exec runs the health-check command in the container, as the
// incumbent's chart did, by the incumbent's name (the image links it) or site-agent's.
func TestHelmExecProbes(t *testing.T) {
	for _, tc := range []struct {
		set  []string
		want string
	}{
		{nil, "waldur_site_healthz"},
		{[]string{"--set", "healthCheck.command={/usr/local/bin/site-agent,healthz}"}, "/usr/local/bin/site-agent healthz"},
	} {
		objs := render(t, append([]string{"--set", "healthCheck.type=exec"}, tc.set...)...)
		c := typed[appsv1.Deployment](t, find(objs, "Deployment")).Spec.Template.Spec.Containers[0]
		if c.LivenessProbe.Exec == nil || c.ReadinessProbe.Exec == nil || c.LivenessProbe.HTTPGet != nil {
			t.Fatalf("exec probes %+v %+v", c.LivenessProbe, c.ReadinessProbe)
		}
		if got := strings.Join(c.LivenessProbe.Exec.Command, " "); got != tc.want+" --liveness-only" {
			t.Errorf("liveness %q", got)
		}
		if got := strings.Join(c.ReadinessProbe.Exec.Command, " "); got != tc.want+" --config-file /etc/waldur-site-agent/config.yaml" {
			t.Errorf("readiness %q", got)
		}
	}
}

// TestHelmLeaderElection: replicas need leader election; with it the chart grants the Lease and
// passes the election flags with the pod name as identity.
func TestHelmLeaderElection(t *testing.T) {
	out, code := run(t, helm(t), "template", "agent", chart, "--set", "replicaCount=2")
	if code == 0 || !strings.Contains(out, "replicaCount > 1 needs leaderElection.enabled=true") {
		t.Fatalf("two replicas without leader election must be refused, got exit %d:\n%s", code, out)
	}
	objs := render(t, "--values", filepath.Join(chart, "ci", "ha-values.yaml"))
	want := "ConfigMap,Deployment,PrometheusRule,Role,RoleBinding,Secret,Service,ServiceAccount,ServiceMonitor"
	if got := strings.Join(kinds(objs), ","); got != want {
		t.Fatalf("rendered kinds %s, want %s", got, want)
	}
	d := typed[appsv1.Deployment](t, find(objs, "Deployment"))
	args := strings.Join(d.Spec.Template.Spec.Containers[0].Args, " ")
	for _, a := range []string{"--leader-elect ", "--leader-elect-resource-namespace=site-agent", "--leader-elect-resource-name=agent-site-agent", "--leader-elect-identity=$(POD_NAME)"} {
		if !strings.Contains(args, a) {
			t.Errorf("args %q lack %q", args, a)
		}
	}
	if *d.Spec.Replicas != 2 || d.Spec.Template.Spec.ServiceAccountName != "agent-site-agent" {
		t.Errorf("replicas %d, service account %q", *d.Spec.Replicas, d.Spec.Template.Spec.ServiceAccountName)
	}
	role := typed[rbacv1.Role](t, find(objs, "Role"))
	var verbs []string
	for _, r := range role.Rules {
		if !slices.Equal(r.APIGroups, []string{"coordination.k8s.io"}) || !slices.Equal(r.Resources, []string{"leases"}) {
			t.Errorf("rule beyond leases: %+v", r)
		}
		verbs = append(verbs, r.Verbs...)
	}
	slices.Sort(verbs)
	if strings.Join(verbs, ",") != "create,get,update" {
		t.Errorf("lease verbs %v, want create, get, update", verbs)
	}
	rb := typed[rbacv1.RoleBinding](t, find(objs, "RoleBinding"))
	if rb.RoleRef.Name != role.Name || rb.Subjects[0].Name != "agent-site-agent" || rb.Subjects[0].Namespace != "site-agent" {
		t.Errorf("role binding %+v", rb)
	}
}
