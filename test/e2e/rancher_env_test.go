package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/waldur/site-agent/internal/sim/keycloaksim"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

const rancherCluster = "c-m-e2e00001"

// rancherEnv is the harness env plus a real Kubernetes control plane behind the Rancher
// simulator (or a real Rancher: rancher_real_test.go), a Keycloak simulator, and a second (GPU
// pool) offering in Waldur.
type rancherEnv struct {
	*env
	kube  *kubeenv.Env         // behind the simulator (nil against the real Rancher)
	cs    kubernetes.Interface // the cluster's Kubernetes, as its administrator
	rs    *ranchersim.Server   // nil against the real Rancher
	kc    *keycloaksim.Server
	rsURL string
	kcURL string
	gpu   waldursim.Offering
	ra    rancherAccess
}

// rancherAccess is what the configuration says about Rancher.
type rancherAccess struct {
	access, secret string // the API key
	cluster        string
	prefix         string // project_prefix
}

// simAccess is the Rancher simulator's key and cluster.
var simAccess = rancherAccess{access: "token-sim01", secret: "sim-secret", cluster: rancherCluster, prefix: "waldur-"}

func newRancherEnv(t *testing.T, keycloak bool) *rancherEnv {
	t.Helper()
	return newRancherEnvWith(t, keycloak, waldursim.Options{})
}

// newRancherEnvWith is newRancherEnv with simulator options (an event broker, say).
func newRancherEnvWith(t testing.TB, keycloak bool, opts waldursim.Options) *rancherEnv {
	t.Helper()
	kube := kubeenv.Start(t)
	e := startRancherSims(t, &ranchersim.Upstream{Host: kube.Host, Token: kube.Token, CAData: kube.CAData}, opts, nil)
	e.kube, e.cs = kube, kube.Clientset
	e.writeRancherConfig(keycloak)
	t.Cleanup(func() {
		if !t.Failed() {
			e.sim.AssertNoViolations(t)
			e.rs.AssertNoViolations(t)
		}
	})
	return e
}

// startRancherSims starts the Waldur, Rancher and Keycloak simulators on loopback and seeds
// the world both rancher offerings use. up is the Kubernetes API server behind Rancher (nil:
// none, /k8s answers 503); wrap, when set, wraps each simulator's handler (benchmarks time
// and count requests with it).
func startRancherSims(t testing.TB, up *ranchersim.Upstream, wopts waldursim.Options, wrap func(string, http.Handler) http.Handler) *rancherEnv {
	t.Helper()
	if wrap == nil {
		wrap = func(_ string, h http.Handler) http.Handler { return h }
	}
	e := startWorld(t, wopts, wrap)
	e.rs = ranchersim.New(ranchersim.Options{Clusters: []string{rancherCluster}, Upstream: up})
	rsrv := httptest.NewTLSServer(wrap("rancher", e.rs))
	t.Cleanup(rsrv.Close)
	e.rsURL, e.ra = rsrv.URL, simAccess
	return e
}

// startWorld starts the Waldur and Keycloak simulators and seeds what both rancher offerings
// use: the team in Keycloak, the GPU pool offering.
func startWorld(t testing.TB, wopts waldursim.Options, wrap func(string, http.Handler) http.Handler) *rancherEnv {
	t.Helper()
	if wrap == nil {
		wrap = func(_ string, h http.Handler) http.Handler { return h }
	}
	wopts.Token = scenario.Token
	sim := waldursim.New(wopts)
	srv := httptest.NewServer(wrap("waldur", sim))
	t.Cleanup(srv.Close)
	e := &rancherEnv{env: &env{t: t, sim: sim, url: srv.URL, dir: t.TempDir(), world: scenario.New(sim, scenario.Options{Users: 3})}}
	e.kc = keycloaksim.New(keycloaksim.Options{PathPrefix: "/auth"})
	ksrv := httptest.NewServer(wrap("keycloak", e.kc))
	t.Cleanup(ksrv.Close)
	e.kcURL = ksrv.URL + "/auth/"
	// Waldur names users phys_<name>; one Keycloak id equals its Waldur username (lookup by id),
	// the others are found by the username fallback.
	for _, u := range e.world.Users {
		e.kc.AddUser("phys_" + u.Username)
	}
	if err := e.kc.SetUserID("phys_alice", "phys_alice"); err != nil {
		t.Fatal(err)
	}
	limit := "limit"
	e.gpu = sim.AddOffering(waldursim.Offering{Name: "GPU H100 pool", CustomerUUID: e.world.Provider.UUID,
		Components: []waldursim.Component{{Type: "cpu", Name: "CPU", MeasuredUnit: "cores", BillingType: limit},
			{Type: "ram", Name: "RAM", MeasuredUnit: "GB", BillingType: limit},
			{Type: "gpu_h100", Name: "H100 GPU", MeasuredUnit: "GPUs", BillingType: limit}},
		Plans: []waldursim.Plan{{Name: "H100", Quotas: map[string]float64{"cpu": 8, "ram": 32, "gpu_h100": 1}}}})
	for _, u := range e.world.Users {
		sim.AddOfferingUser(waldursim.OfferingUser{OfferingUUID: e.gpu.UUID, UserUUID: u.UUID, Username: "phys_" + u.Username})
	}
	return e
}

// writeRancherConfig writes an incumbent-style configuration with both offerings.
func (e *rancherEnv) writeRancherConfig(keycloak bool) {
	settings := func(labels string) string {
		return fmt.Sprintf(`      backend_url: "%s"
      username: "%s"
      password: "%s"
      cluster_id: "%s"
      verify_cert: false
      project_prefix: "%s"
      default_role: "workloads-manage"
      keycloak_enabled: %v
      keycloak_use_user_id: true
%s      keycloak:
        keycloak_url: "%s"
        keycloak_realm: "waldur"
        keycloak_user_realm: "master"
        keycloak_username: "admin"
        keycloak_password: "admin"
        keycloak_ssl_verify: true
`, e.rsURL, e.ra.access, e.ra.secret, e.ra.cluster, e.ra.prefix, keycloak, labels, e.kcURL)
	}
	offering := func(name, uuid, labels, comps string) string {
		return fmt.Sprintf(`  - name: "%s"
    waldur_api_url: "%s/api/"
    waldur_api_token: "%s"
    waldur_offering_uuid: "%s"
    backend_type: "rancher"
    order_processing_backend: "rancher"
    membership_sync_backend: "rancher"
    reporting_backend: "rancher"
    backend_settings:
%s    backend_components:
%s`, name, e.url, scenario.Token, uuid, settings(labels), comps)
	}
	cpuComps := `      cpu: {type: "cpu", measured_unit: "cores", accounting_type: "limit", label: "CPU Cores", unit_factor: 1}
      ram: {type: "ram", measured_unit: "GB", accounting_type: "limit", label: "Memory (GB)", unit_factor: 1}
      storage: {type: "storage", measured_unit: "GB", accounting_type: "limit", label: "Storage (GB)", unit_factor: 1}
`
	gpuComps := `      cpu: {type: "cpu", measured_unit: "cores", accounting_type: "limit", label: "CPU", unit_factor: 1}
      ram: {type: "ram", measured_unit: "GB", accounting_type: "limit", label: "RAM", unit_factor: 1}
      gpu_h100: {type: "gpu", k8s_resource: "nvidia.com/gpu-h100", measured_unit: "GPUs", accounting_type: "limit", label: "H100", unit_factor: 1}
`
	text := "timezone: UTC\nlog_level: INFO\nheartbeat_file: " + filepath.Join(e.dir, "heartbeat") + "\nofferings:\n" +
		offering(e.world.Offering.Name, e.world.Offering.UUID, "", cpuComps) +
		offering(e.gpu.Name, e.gpu.UUID, "      namespace_labels:\n        gpu-pool: \"h100-2x\"\n", gpuComps)
	e.config = filepath.Join(e.dir, "config.yaml")
	if err := os.WriteFile(e.config, []byte(text), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// gpuOrder adds a pending Create order to the GPU offering.
func (e *rancherEnv) gpuOrder(name string, limits map[string]float64) waldursim.Order {
	return e.sim.AddOrder(waldursim.Order{Type: waldursim.OrderCreate, OfferingUUID: e.gpu.UUID, ProjectUUID: e.world.Project.UUID,
		PlanUUID: e.gpu.Plans[0].UUID, Limits: limits, Attributes: map[string]any{"name": name}})
}

func (e *rancherEnv) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	e.t.Cleanup(cancel)
	return ctx
}

// quota returns spec.hard of a namespace's custom-resource-quota as strings.
func (e *rancherEnv) quota(ns string) map[string]string {
	e.t.Helper()
	q, err := e.cs.CoreV1().ResourceQuotas(ns).Get(e.ctx(), "custom-resource-quota", metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("quota of %s: %v", ns, err)
	}
	out := map[string]string{}
	for k, v := range q.Spec.Hard {
		out[string(k)] = v.String()
	}
	return out
}

// runPod starts a restricted-profile pod (it stays Pending) once pods are admissible.
func (e *rancherEnv) runPod(ns, name string, limits map[string]string) {
	e.t.Helper()
	waitFor(e.t, time.Minute, "the default ServiceAccount of "+ns, func() bool {
		_, err := e.cs.CoreV1().ServiceAccounts(ns).Get(e.ctx(), "default", metav1.GetOptions{})
		return err == nil
	})
	rl := corev1.ResourceList{}
	for k, v := range limits {
		rl[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	no, yes := false, true
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		Containers: []corev1.Container{{Name: "c", Image: "registry.example/idle:1", Resources: corev1.ResourceRequirements{Limits: rl},
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}}}}
	if _, err := e.cs.CoreV1().Pods(ns).Create(e.ctx(), p, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("pod %s/%s: %v", ns, name, err)
	}
}

// waitUsed polls a quota's status.used (computed by the real resourcequota controller).
func (e *rancherEnv) waitUsed(ns, key, want string) {
	e.t.Helper()
	waitFor(e.t, time.Minute, fmt.Sprintf("%s used %s=%s", ns, key, want), func() bool {
		q, err := e.cs.CoreV1().ResourceQuotas(ns).Get(e.ctx(), "custom-resource-quota", metav1.GetOptions{})
		if err != nil {
			return false
		}
		got, ok := q.Status.Used[corev1.ResourceName(key)]
		return ok && got.Cmp(resource.MustParse(want)) == 0
	})
}

func usages(sim *waldursim.Server, resourceUUID string) map[string]float64 {
	out := map[string]float64{}
	for _, u := range sim.ComponentUsages(resourceUUID) {
		out[u.Type] = u.Amount
	}
	return out
}

func projectNames(rs *ranchersim.Server) []string {
	var out []string
	for _, p := range rs.Projects() {
		out = append(out, p.Name)
	}
	return out
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
