package vclusters

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/testenv/kubeenv"
	"github.com/waldur/site-agent/internal/testenv/rancherenv"
)

// The tool against the real Rancher v2.12.0 that scripts/rancher/up.sh runs on loopback
// (internal/testenv/rancherenv): the built program in start mode — its own main API server and
// KWOK — imports its virtual clusters into that Rancher and opens the agent's tunnels to its
// /v3/connect/register and /v3/connect; the tests look only through Rancher's own API.

// The cluster names these tests give are "vr" (the test) or "vb" (the benchmark) + 6 hex digits
// + "-": the server lives across runs, so a run first deletes what an interrupted earlier one of
// its kind left (and leaves the other kind's clusters alone).
var (
	realRancherTestNames  = regexp.MustCompile(`^vr[0-9a-f]{6}-`)
	realRancherBenchNames = regexp.MustCompile(`^vb[0-9a-f]{6}-`)
)

// rancherCluster is a v3 cluster as the tests read it.
type rancherCluster struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	State       string            `json:"state"`
	Capacity    map[string]string `json:"capacity"`
	Allocatable map[string]string `json:"allocatable"`
	Requested   map[string]string `json:"requested"`
	Limits      map[string]string `json:"limits"`
	NodeCount   int               `json:"nodeCount"`
	Conditions  []struct {
		Type   string `json:"type"`
		Status string `json:"status"`
	} `json:"conditions"`
}

// rancherNode is a v3 node (management.cattle.io Node, made by Rancher's nodesyncer from the
// cluster's Kubernetes Nodes).
type rancherNode struct {
	NodeName     string            `json:"nodeName"`
	State        string            `json:"state"`
	ControlPlane bool              `json:"controlPlane"`
	Worker       bool              `json:"worker"`
	Capacity     map[string]string `json:"capacity"`
}

type rancherWorld struct {
	env    *rancherenv.Env
	admin  *rancherenv.Admin
	key    rancherenv.Key // the program's API key (an admin's)
	p      *process
	prefix string
}

// newRancherWorld starts the program against the real Rancher with an API key of its admin;
// extra is appended to the configuration file.
func newRancherWorld(t testing.TB, logLevel, extra string) *rancherWorld {
	t.Helper()
	r := rancherenv.Load(t)
	kind, names := "vr", realRancherTestNames
	if _, bench := t.(*testing.B); bench {
		kind, names = "vb", realRancherBenchNames
	}
	w := &rancherWorld{env: r, admin: r.Admin(), prefix: kind + rancherenv.Suffix() + "-"}
	w.sweep(t, names.MatchString)
	bin, ok := kubeenv.BinDir()
	etcd, err := exec.LookPath("etcd")
	if !ok || err != nil {
		t.Fatalf("binaries missing in %s or etcd not in PATH: run scripts/kube/build.sh", bin)
	}
	stateDir := t.TempDir()
	cfg := binaryConfig(t, stateDir, "", r.URL, "tunnel: {}\nkwok:\n  mode: run\n  binary: "+kwokBinary(t)+"\n"+extra)
	cfg = rewrite(t, cfg, "log_level: info\n", "log_level: "+logLevel+"\n")
	// A real Rancher on a loaded machine answers /v3/clusters in tens of seconds at 50 clusters.
	cfg = rewrite(t, cfg, "  insecure: true\n", "  insecure: true\n  timeout: 2m\n")
	cfg = rewrite(t, cfg, "  kubeconfig: \n", "  start:\n    kube_apiserver: "+filepath.Join(bin, "kube-apiserver")+
		"\n    etcd: "+etcd+"\n    kube_controller_manager: "+filepath.Join(bin, "kube-controller-manager")+
		"\n    etcd_unsafe_no_fsync: true\n")
	w.key = w.admin.APIKey(t, "site-agent-vclusters tier 2")
	w.p = startBinary(t, cfg, w.key.Bearer(), freePort(t))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the program's output:\n%s", w.p.out)
		}
		w.sweep(t, func(name string) bool { return len(name) > len(w.prefix) && name[:len(w.prefix)] == w.prefix })
	})
	return w
}

func (w *rancherWorld) name(i int) string { return fmt.Sprintf("%s%03d", w.prefix, i) }

// cluster reads the named cluster from Rancher (found false when Rancher lists none).
func (w *rancherWorld) cluster(t testing.TB, name string) (rancherCluster, bool) {
	t.Helper()
	var cs []rancherCluster
	if err := w.admin.List(t.Context(), "/v3/clusters?name="+url.QueryEscape(name), &cs); err != nil {
		t.Fatalf("rancher: %v", err)
	}
	if len(cs) == 0 {
		return rancherCluster{}, false
	}
	return cs[0], true
}

// nodes lists the cluster's v3 nodes.
func (w *rancherWorld) nodes(t testing.TB, clusterID string) []rancherNode {
	t.Helper()
	var ns []rancherNode
	if err := w.admin.List(t.Context(), "/v3/nodes?clusterId="+url.QueryEscape(clusterID), &ns); err != nil {
		t.Fatalf("rancher: %v", err)
	}
	return ns
}

// sweep deletes the Rancher clusters whose names match (those of this run, or left by an
// interrupted earlier one) and waits until Rancher lists them no more (3 minutes, and 3 s more
// for each).
func (w *rancherWorld) sweep(t testing.TB, match func(string) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	list := func() []rancherCluster {
		var cs []rancherCluster
		for try := 1; ; try++ {
			err := w.admin.List(ctx, "/v3/clusters", &cs)
			if err == nil {
				break
			}
			if try == 3 {
				t.Errorf("sweep: %v", err)
				return nil
			}
		}
		var out []rancherCluster
		for _, c := range cs {
			if match(c.Name) {
				out = append(out, c)
			}
		}
		return out
	}
	left := list()
	for _, c := range left {
		if err := w.admin.Do(ctx, http.MethodDelete, "/v3/clusters/"+c.ID, nil, nil); err != nil && !strings.Contains(err.Error(), ": 404 ") {
			t.Logf("sweep: delete %s: %v", c.Name, err)
		}
	}
	limit := 3*time.Minute + time.Duration(len(left))*3*time.Second
	for deadline := time.Now().Add(limit); len(left) > 0; left = list() {
		if time.Now().After(deadline) {
			t.Errorf("sweep: Rancher still lists %d clusters after %s (first: %s %s)", len(left), limit, left[0].Name, left[0].State)
			return
		}
		time.Sleep(2 * time.Second)
	}
}

// condition is the status of the cluster's condition typ ("" when absent).
func (c rancherCluster) condition(typ string) string {
	for _, cond := range c.Conditions {
		if cond.Type == typ {
			return cond.Status
		}
	}
	return ""
}
