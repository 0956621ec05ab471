package vclusters

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// realWorld is a manager against the shared real kube-apiserver and a Rancher simulator.
type realWorld struct {
	t      *testing.T
	env    *kubeenv.Env
	sim    *ranchersim.Server
	srv    *httptest.Server
	cfg    Config
	m      *Manager
	stop   func()
	logs   *observer.ObservedLogs
	prefix string // unique per test: tests share the API server
}

var worlds atomic.Int64

func newRealWorld(t *testing.T, tune func(*Config)) *realWorld {
	t.Helper()
	env := kubeenv.Shared(t)
	if env == nil {
		return nil
	}
	useSharedKwok(t, env)
	sim, srv := rancherSim(t)
	h := fnv.New32a()
	fmt.Fprintf(h, "%s#%d", t.Name(), worlds.Add(1))
	w := &realWorld{t: t, env: env, sim: sim, srv: srv, prefix: fmt.Sprintf("t%06x", h.Sum32()&0xffffff)}
	w.cfg = testConfig(t, srv.URL, sim.Token())
	w.cfg.Kwok.Mode = KwokExternal // the shared KWOK (kwok_env_test.go)
	if tune != nil {
		tune(&w.cfg)
	}
	w.start()
	return w
}

// start runs a (new) manager on the world's state directory.
func (w *realWorld) start() {
	w.t.Helper()
	core, logs := observer.New(zapcore.InfoLevel)
	w.logs = logs
	log := zap.New(zapcore.NewTee(core, zaptest.NewLogger(w.t, zaptest.Level(zapcore.WarnLevel)).Core()))
	deps, err := DepsFor(w.env.Config, log)
	if err != nil {
		w.t.Fatal(err)
	}
	w.m, err = NewManager(w.cfg, deps)
	if err != nil {
		w.t.Fatal(err)
	}
	w.stop = runManager(w.t, w.m)
}

func (w *realWorld) name(s string) string { return w.prefix + "-" + s }

func (w *realWorld) create(names ...string) {
	w.t.Helper()
	for _, n := range names {
		if a := call(w.t, w.m.Handler(), "POST", "/clusters", `{"name":"`+n+`"}`); a.code != 201 {
			w.t.Fatalf("create %s: %d %s", n, a.code, a.raw)
		}
	}
}

// connected waits until every named cluster is connected and active in Rancher.
func (w *realWorld) connected(limit time.Duration, names ...string) {
	w.t.Helper()
	waitForLong(w.t, limit, fmt.Sprintf("%d clusters connected and active", len(names)), func() bool {
		for _, n := range names {
			v, ok := w.m.Get(n)
			info, found := w.sim.ClusterByName(n)
			if !ok || v.Status != StatusConnected || !found || info.State != "active" {
				return false
			}
		}
		return true
	})
}

// requested waits (up to limit) until Rancher's totals for each cluster count its 3 Nodes and
// 10 Pods. They come from the Nodes' pod-requests annotations, which the tool writes after setup
// and again every pod_resources_interval: a Pod bound after the first write is counted at the
// next one. Real Rancher follows the annotations with watches; the simulator lists the Nodes
// once a cluster is active and then only every StatsInterval (a minute), so each try asks it to
// read them again (RefreshStats), as a watch would have.
func (w *realWorld) requested(limit time.Duration, names ...string) {
	w.t.Helper()
	for _, name := range names {
		for deadline := time.Now().Add(limit); ; time.Sleep(500 * time.Millisecond) {
			if info, ok := w.sim.ClusterByName(name); ok {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_ = w.sim.RefreshStats(ctx, info.ID) // an error (tunnel reconnecting) is tried again
				cancel()
			}
			info, _ := w.sim.ClusterByName(name)
			r := info.Requested
			if info.Nodes == 3 && info.Capacity["cpu"] == "48" && r["cpu"] == "1" && r["memory"] == "1280Mi" && r["pods"] == "10" {
				break
			}
			if time.Now().After(deadline) {
				w.t.Fatalf("%s in rancher after %s: nodes %d capacity %v requested %v", name, limit, info.Nodes, info.Capacity, r)
			}
		}
	}
}

// rancher sends a request to the simulator with its API key and decodes the JSON answer.
func (w *realWorld) rancher(method, path string, out any) int {
	w.t.Helper()
	req, _ := http.NewRequest(method, w.srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+w.sim.Token())
	resp, err := w.srv.Client().Do(req)
	if err != nil {
		w.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		_ = json.Unmarshal(data, out)
	}
	return resp.StatusCode
}

func (w *realWorld) logged(msg string) int { return w.logs.FilterMessage(msg).Len() }

func (w *realWorld) nodes(cluster string) int {
	w.t.Helper()
	list, err := w.env.Clientset.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: NodeSelector(cluster)})
	if err != nil {
		w.t.Fatal(err)
	}
	return len(list.Items)
}

func (w *realWorld) metrics() string {
	return call(w.t, w.m.Handler(), "GET", "/metrics", "").raw
}

func hasLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if l == line {
			return true
		}
	}
	return false
}
