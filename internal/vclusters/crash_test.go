package vclusters

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// A crash (SIGKILL) in the middle of setup — after the Rancher cluster was created, before its
// registration token could be had — and a restart: the restarted tool finishes the job,
// adopting the Rancher cluster instead of creating a second one.
func TestRealCrashMidSetupIsCompletedByTheRestart(t *testing.T) {
	env := kubeenv.Shared(t)
	if env == nil {
		return
	}
	useSharedKwok(t, env)
	sim, srv := rancherSim(t)
	sim.SetFaults(ranchersim.Faults{Rate: 1, Operations: []string{"crt.create"}, Kinds: []ranchersim.FaultKind{ranchersim.Fault500}})
	stateDir := t.TempDir()
	cfg := binaryConfig(t, stateDir, kubeconfigFor(t, env), srv.URL, "")
	port := freePort(t)
	name := "crash-" + time.Now().Format("150405")

	p := startBinary(t, cfg, sim.Token(), port)
	if code, body := p.call(t, "POST", "/clusters", `{"name":"`+name+`"}`); code != 201 {
		t.Fatalf("create: %d %v", code, body)
	}
	waitForLong(t, 30*time.Second, "setup to stop at the registration token", func() bool {
		var st stateDoc
		data, _ := os.ReadFile(filepath.Join(stateDir, "state.json"))
		return json.Unmarshal(data, &st) == nil && len(st.Clusters) == 1 && st.Clusters[0].RancherID != "" &&
			st.Clusters[0].Step == StepTenant && st.Clusters[0].Status == StatusError
	})
	p.kill()
	if info, ok := sim.ClusterByName(name); !ok || info.State != "pending" {
		t.Fatalf("rancher after the crash: %+v %v", info, ok)
	}

	sim.SetFaults(ranchersim.Faults{}) // Rancher recovers
	p = startBinary(t, cfg, sim.Token(), port)
	waitForLong(t, 60*time.Second, "the restarted tool to connect the cluster", func() bool {
		code, body := p.call(t, "GET", "/clusters/"+name, "")
		info, _ := sim.ClusterByName(name)
		return code == 200 && body["status"] == string(StatusConnected) && info.State == "active"
	})
	if n := len(sim.ImportedClusters()); n != 1 || sim.Calls()["cluster.create"] != 1 {
		t.Errorf("rancher has %d clusters after %d creates: the restart must adopt, not duplicate", n, sim.Calls()["cluster.create"])
	}
	ctx := context.Background()
	nodes, _ := env.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: NodeSelector(name)})
	pods, _ := env.Clientset.CoreV1().Pods(TenantNamespace(name)).List(ctx, metav1.ListOptions{LabelSelector: NodeSelector(name)})
	if len(nodes.Items) != 3 || len(pods.Items) != 10 {
		t.Errorf("after the restart: %d nodes, %d pods", len(nodes.Items), len(pods.Items))
	}
	// Clean up through the API (the shared API server outlives this test).
	if code, _ := p.call(t, "DELETE", "/clusters/"+name, ""); code != 200 {
		t.Errorf("delete: %d", code)
	}
}
