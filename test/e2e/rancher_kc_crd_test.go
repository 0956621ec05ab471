package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// kcWorld is the incumbent's rancher-kc-crd example configuration, run unchanged by the built
// binary against the Waldur simulator and (in tier 2) the real kube-apiserver.
type kcWorld struct {
	t        *testing.T
	sim      *waldursim.Server
	world    *scenario.World
	kube     *kubeenv.Env // nil: no Kubernetes (the agent must not get that far)
	home     string
	config   string
	resource waldursim.Resource
	rps      []waldursim.ResourceProject
}

const kcNamespace = "waldur-system" // the example's namespace

// newKcWorld seeds Waldur: one cluster resource with two resource projects and their grants,
// a resource-level role, and the offering opted in to membership sync statuses.
func newKcWorld(t *testing.T, version string, kube *kubeenv.Env, server string) *kcWorld {
	t.Helper()
	sim := waldursim.New(waldursim.Options{Token: scenario.Token, Version: version})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	w := &kcWorld{t: t, sim: sim, world: scenario.New(sim, scenario.Options{Users: 3}), kube: kube, home: t.TempDir()}
	t.Cleanup(func() {
		if !t.Failed() {
			sim.AssertNoViolations(t)
		}
	})
	sim.SetPluginOptions(w.world.Offering.UUID, map[string]any{"enable_resource_projects": true, "enable_membership_sync_status": true})
	w.resource = sim.AddResource(waldursim.Resource{Name: "Adamas", Slug: "adamas-cluster", OfferingUUID: w.world.Offering.UUID,
		ProjectUUID: w.world.Project.UUID, BackendID: "c-m-abc12345", State: waldursim.ResourceOK})
	alice, bob, carol := w.world.Users[0].UUID, w.world.Users[1].UUID, w.world.Users[2].UUID
	for _, name := range []string{"Genomics", "Physics"} {
		w.rps = append(w.rps, sim.AddResourceProject(waldursim.ResourceProject{ResourceUUID: w.resource.UUID, Name: name,
			Limits: map[string]any{"cpu": 4000, "memory": "16Gi", "gpu": 0}}))
	}
	sim.GrantRole(w.rps[0].UUID, alice, "project_member")
	sim.GrantRole(w.rps[0].UUID, bob, "project_admin")
	sim.GrantRole(w.rps[0].UUID, carol, "create_ns")
	sim.GrantRole(w.rps[1].UUID, bob, "project_member")
	sim.GrantRole(w.rps[1].UUID, carol, "guest") // not in role_map: never bound, never reported
	sim.GrantRole(w.resource.UUID, alice, "resource_admin")
	w.writeConfig(srv.URL)
	w.writeKubeconfig(server)
	return w
}

// writeConfig is the example with the three placeholders every site fills in; nothing else
// changes (the test fails if the example no longer has exactly these).
func (w *kcWorld) writeConfig(waldurURL string) {
	raw, err := os.ReadFile("testdata/rancher-kc-crd-config.yaml")
	if err != nil {
		w.t.Fatal(err)
	}
	text := string(raw)
	for _, r := range []struct {
		old, new string
		n        int
	}{
		{`"https://waldur.example.com/api/"`, `"` + waldurURL + `/api/"`, 2},
		{`waldur_api_token: "your-waldur-api-token"`, `waldur_api_token: "` + scenario.Token + `"`, 1},
		{`"offering-uuid-of-the-rancher-service"`, `"` + w.world.Offering.UUID + `"`, 1},
	} {
		if got := strings.Count(text, r.old); got != r.n {
			w.t.Fatalf("the example has %d of %s, want %d", got, r.old, r.n)
		}
		text = strings.ReplaceAll(text, r.old, r.new)
	}
	w.config = filepath.Join(w.t.TempDir(), "rancher-kc-crd-config.yaml")
	if err := os.WriteFile(w.config, []byte(text), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// writeKubeconfig puts ~/.kube/config (the example's kubeconfig_path) with the example's
// context aio-rancher into the agent's HOME.
func (w *kcWorld) writeKubeconfig(server string) {
	cluster := map[string]any{"server": server, "insecure-skip-tls-verify": true}
	token := "unused"
	if w.kube != nil {
		cluster = map[string]any{"server": w.kube.Host, "certificate-authority-data": w.kube.CAData}
		token = w.kube.Token
	}
	cfg := map[string]any{"apiVersion": "v1", "kind": "Config",
		"clusters": []any{map[string]any{"name": "aio", "cluster": cluster}},
		"users":    []any{map[string]any{"name": "agent", "user": map[string]any{"token": token}}},
		"contexts": []any{map[string]any{"name": "aio-rancher", "context": map[string]any{"cluster": "aio", "user": "agent"}}},
	}
	data, _ := json.Marshal(cfg)
	dir := filepath.Join(w.home, ".kube")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config"), data, 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// pass runs `-m membership_sync --once` with the example configuration.
func (w *kcWorld) pass() result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "-m", "membership_sync", "-c", w.config, "--once")
	cmd.Env = append(os.Environ(), "HOME="+w.home, "SITE_AGENT_HEARTBEAT_FILE="+filepath.Join(w.home, "heartbeat"),
		"SITE_AGENT_CYCLE_TIMEOUT=50s", "KUBECONFIG=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// A Waldur older than the resource-project API gets one refusal naming the version found and
// the one needed, before any other Waldur or Kubernetes call: no 404s.
func TestRancherKcCrdRefusesAnOldWaldur(t *testing.T) {
	w := newKcWorld(t, "8.0.5", nil, "https://127.0.0.1:1")
	r := w.pass()
	all := r.stdout + r.stderr
	if r.code == 0 || !strings.Contains(all, "Waldur 8.0.5 is too old") || !strings.Contains(all, "Waldur 8.0.8 or later") {
		t.Fatalf("want a refusal naming 8.0.5 and 8.0.8:\n%s", r)
	}
	if n := strings.Count(all, "is too old"); n != 1 {
		t.Fatalf("the refusal is said %d times:\n%s", n, r)
	}
	for op, n := range w.sim.Calls() {
		if strings.Contains(op, "resource_projects") || strings.Contains(op, "list_users") || op == "marketplace_provider_resources_list" {
			t.Errorf("%s called %d times", op, n)
		}
	}
}

func TestRancherKcCrdIncumbentExample(t *testing.T) {
	kube := kubeenv.Start(t)
	manifest, err := os.ReadFile("../../configs/rancher-kc-crd/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kube.InstallCRD(t, manifest)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kcNamespace}}
	if _, err := kube.Clientset.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w := newKcWorld(t, waldursim.AddendumVersion, kube, "")
	r := w.pass()
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "backend_settings.waldur_api_token: ignored") {
		t.Fatalf("first pass:\n%s", r)
	}
	genomics, physics := "adamas-cluster-"+w.rps[0].UUID[:8], "adamas-cluster-"+w.rps[1].UUID[:8]
	if got := w.crNames(); !slices.Equal(got, sortedPair(genomics, physics)) {
		t.Fatalf("custom resources %v", got)
	}
	w.checkSpec(genomics)
	if st := w.states(); st["alice/project_member"] != "pending" || st["alice/resource_admin"] != "pending" || len(st) != 5 {
		t.Fatalf("before the operator: %v", st)
	}
	w.operatorPhase(genomics, "Ready", map[string]any{
		"keycloakRoleBindings":        []any{map[string]any{"syncedMembers": []any{"alice", map[string]any{"userIdentifier": "bob"}}}},
		"clusterKeycloakRoleBindings": []any{map[string]any{"syncedMembers": []any{map[string]any{"userIdentifier": "alice"}}}}})
	w.operatorPhase(physics, "Error", map[string]any{"conditions": []any{
		map[string]any{"type": "KeycloakGroupsReady", "status": "False", "reason": "Unreachable", "message": "Keycloak unreachable"}}})
	if r := w.pass(); r.code != 0 {
		t.Fatalf("second pass:\n%s", r)
	}
	want := map[string]string{"alice/project_member": "synced", "bob/project_admin": "synced", "carol/create_ns": "missing_in_idp",
		"bob/project_member": "error", "alice/resource_admin": "synced"}
	if d := cmp.Diff(want, w.states()); d != "" {
		t.Fatalf("membership sync statuses (-want +got):\n%s", d)
	}
	w.checkProjects()
	w.sim.RemoveResourceProject(w.rps[1].UUID)
	w.deleteCR(genomics)
	if r := w.pass(); r.code != 0 {
		t.Fatalf("third pass:\n%s", r)
	}
	if got := w.crNames(); !slices.Equal(got, []string{genomics}) {
		t.Fatalf("the removed resource project's CR must go and the one deleted by hand come back: %v", got)
	}
}

func sortedPair(a, b string) []string {
	s := []string{a, b}
	slices.Sort(s)
	return s
}

func (w *kcWorld) checkSpec(name string) {
	obj := w.cr(name)
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	raw, _ := json.Marshal(spec)
	s := string(raw)
	rp := w.rps[0].UUID
	for _, want := range []string{`"clusterId":"c-m-abc12345"`, `"projectName":"Genomics"`, `"parentGroupName":"c_c-m-abc12345"`,
		`"groupName":"c_c-m-abc12345_` + rp + `_create_ns","members":[{"lookupByID":false,"userIdentifier":"carol"}],"rancherRole":"create-ns"`,
		`"groupName":"c_c-m-abc12345_cluster_resource_admin"`, `"resourceQuotas":{"cpu":4000,"memory":"16Gi"}`} {
		if !strings.Contains(s, want) {
			w.t.Errorf("spec lacks %s:\n%s", want, s)
		}
	}
	if strings.Contains(s, "guest") {
		w.t.Errorf("an unmapped role was written: %s", s)
	}
}

func (w *kcWorld) checkProjects() {
	if got, _ := w.sim.ResourceProject(w.rps[0].UUID); got.State != waldursim.ProjectOK {
		w.t.Errorf("Genomics: %+v", got)
	}
	if got, _ := w.sim.ResourceProject(w.rps[1].UUID); got.State != waldursim.ProjectErred || got.ErrorMessage != "Keycloak unreachable" {
		w.t.Errorf("Physics: %+v", got)
	}
	res, _ := w.sim.Resource(w.resource.UUID)
	entries, _ := res.BackendMetadata["managed_rancher_projects"].([]any)
	if len(entries) != 2 || res.BackendMetadata["namespace"] != kcNamespace {
		w.t.Errorf("backend metadata %v", res.BackendMetadata)
	}
}

// states maps "username/role" to the stored membership sync state.
func (w *kcWorld) states() map[string]string {
	names := map[string]string{}
	for _, u := range w.world.Users {
		names[u.UUID] = u.Username
	}
	out := map[string]string{}
	for _, s := range w.sim.MembershipSyncStatuses(w.resource.UUID) {
		out[names[s.UserUUID]+"/"+s.RoleName] = s.State
	}
	return out
}

func (w *kcWorld) crPath(name ...string) []string {
	return append([]string{"/apis/waldur.io/v1alpha1/namespaces", kcNamespace, "managedrancherprojects"}, name...)
}

func (w *kcWorld) crNames() []string {
	raw, err := w.kube.Clientset.CoreV1().RESTClient().Get().AbsPath(w.crPath()...).Do(context.Background()).Raw()
	if err != nil {
		w.t.Fatal(err)
	}
	var l unstructured.UnstructuredList
	if err := l.UnmarshalJSON(raw); err != nil {
		w.t.Fatal(err)
	}
	var out []string
	for _, it := range l.Items {
		out = append(out, it.GetName())
	}
	return out
}

func (w *kcWorld) cr(name string) *unstructured.Unstructured {
	raw, err := w.kube.Clientset.CoreV1().RESTClient().Get().AbsPath(w.crPath(name)...).Do(context.Background()).Raw()
	if err != nil {
		w.t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		w.t.Fatal(err)
	}
	return obj
}

// operatorPhase writes status as the operator does, observing the current generation.
func (w *kcWorld) operatorPhase(name, phase string, extra map[string]any) {
	st := map[string]any{"phase": phase, "observedGeneration": w.cr(name).GetGeneration()}
	for k, v := range extra {
		st[k] = v
	}
	body, _ := json.Marshal(map[string]any{"status": st})
	err := w.kube.Clientset.CoreV1().RESTClient().Patch(types.MergePatchType).AbsPath(w.crPath(name, "status")...).Body(body).
		Do(context.Background()).Error()
	if err != nil {
		w.t.Fatal(err)
	}
}

func (w *kcWorld) deleteCR(name string) {
	if err := w.kube.Clientset.CoreV1().RESTClient().Delete().AbsPath(w.crPath(name)...).Do(context.Background()).Error(); err != nil {
		w.t.Fatal(err)
	}
}
