package vclusters

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/rancher"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/testenv"
	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// BenchmarkVirtualClusters measures the figures in one run (tier 2; use -benchtime 1x):
// create + connect of 100 clusters by the release binary, its RSS per connected cluster, the
// reconnect storm after a Rancher restart, requests per second through one tunnel (and the same
// requests to a cluster Rancher reaches directly), and one order of the rancher backend
// against a tunnelled cluster next to a direct one.
func BenchmarkVirtualClusters(b *testing.B) {
	testenv.SkipUnderRace(b, "figures measured under the race detector mean nothing")
	env := kubeenv.Shared(b)
	if env == nil {
		return
	}
	n := scaleClusters(b)
	for range b.N {
		bw := newBenchWorld(b, env)
		names := bw.createAll(b, n)
		bw.reconnectStorm(b, names)
		id := bw.clusterID(names[0])
		bw.throughput(b, "/k8s/clusters/"+id+"/version", "tunnel_req_per_s")
		bw.throughput(b, "/k8s/clusters/c-m-direct/version", "direct_req_per_s")
		bw.order(b, "c-m-direct", "direct")
		bw.order(b, id, "tunnel")
		bw.p.kill()
	}
}

type benchWorld struct {
	env  *kubeenv.Env
	sim  *ranchersim.Server
	srv  *httptest.Server
	addr string
	p    *process
}

func newBenchWorld(b *testing.B, env *kubeenv.Env) *benchWorld {
	bw := &benchWorld{env: env, sim: ranchersim.New(ranchersim.Options{Clusters: []string{"c-m-direct"},
		Upstream: &ranchersim.Upstream{Host: env.Host, Token: env.Token, CAData: env.CAData}})}
	bw.srv = httptest.NewTLSServer(bw.sim)
	bw.addr = bw.srv.Listener.Addr().String()
	b.Cleanup(func() { bw.srv.Close(); bw.sim.CloseTunnels() })
	// The tool's defaults for reconnects and throttling; more setup workers for the burst.
	cfg := binaryConfig(b, b.TempDir(), kubeconfigFor(b, env), bw.srv.URL, "setup_concurrency: 16\ntunnel: {}\n")
	bw.p = startBinary(b, cfg, bw.sim.Token(), freePort(b))
	return bw
}

func (bw *benchWorld) clusterID(name string) string {
	info, _ := bw.sim.ClusterByName(name)
	return info.ID
}

// createAll posts n clusters and waits until Rancher shows every one active; it reports the
// time and the binary's RSS per cluster.
func (bw *benchWorld) createAll(b *testing.B, n int) []string {
	time.Sleep(time.Second) // let the idle process settle before its baseline
	idle := bw.p.rssBytes()
	prefix := fmt.Sprintf("b%d", time.Now().Unix()%100000)
	names := make([]string, n)
	began := time.Now()
	for i := range names {
		names[i] = fmt.Sprintf("%s-%03d", prefix, i)
		if code, body := bw.p.call(b, "POST", "/clusters", `{"name":"`+names[i]+`"}`); code != 201 {
			b.Fatalf("create: %d %v", code, body)
		}
	}
	waitForLong(b, 5*time.Minute, "all clusters active in rancher", func() bool { return bw.active(names) == n })
	took := time.Since(began)
	time.Sleep(2 * time.Second) // a couple of ping intervals
	connected := bw.p.rssBytes()
	b.ReportMetric(took.Seconds(), "create_connect_s")
	b.ReportMetric(float64(idle)/(1<<20), "rss_idle_MiB")
	b.ReportMetric(float64(connected)/(1<<20), "rss_connected_MiB")
	b.ReportMetric(float64(connected-idle)/float64(n)/(1<<20), "rss_MiB_per_cluster")
	return names
}

func (bw *benchWorld) active(names []string) int {
	n := 0
	for _, name := range names {
		if info, ok := bw.sim.ClusterByName(name); ok && info.State == "active" {
			n++
		}
	}
	return n
}

// reconnectStorm stops Rancher for 3 s (every tunnel drops) and measures, from its restart,
// when each cluster's agent session is back.
func (bw *benchWorld) reconnectStorm(b *testing.B, names []string) {
	bw.srv.Close()
	bw.sim.CloseTunnels()
	time.Sleep(3 * time.Second)
	ln, err := net.Listen("tcp", bw.addr)
	if err != nil {
		b.Fatal(err)
	}
	bw.srv = httptest.NewUnstartedServer(bw.sim)
	bw.srv.Listener = ln
	bw.srv.StartTLS()
	began := time.Now()
	back := map[string]time.Duration{}
	for deadline := began.Add(2 * time.Minute); len(back) < len(names) && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, name := range names {
			if _, ok := back[name]; !ok {
				if agent, _ := bw.sim.Sessions(bw.clusterID(name)); agent {
					back[name] = time.Since(began)
				}
			}
		}
	}
	if len(back) < len(names) {
		b.Fatalf("only %d of %d clusters reconnected within 2 minutes", len(back), len(names))
	}
	times := make([]time.Duration, 0, len(back))
	for _, d := range back {
		times = append(times, d)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(times[0].Seconds(), "storm_first_s")
	b.ReportMetric(times[len(times)/2].Seconds(), "storm_median_s")
	b.ReportMetric(times[len(times)-1].Seconds(), "storm_all_back_s")
}

// throughput sends GETs to path through Rancher from 16 clients for 3 s.
func (bw *benchWorld) throughput(b *testing.B, path, metric string) {
	client := bw.srv.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = 16
	var ok, failed atomic.Int64
	stop := time.Now().Add(3 * time.Second)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				req, _ := http.NewRequest("GET", bw.srv.URL+path, nil)
				req.Header.Set("Authorization", "Bearer "+bw.sim.Token())
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					ok.Add(1)
				} else {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		b.Errorf("%s: %d requests failed", path, failed.Load())
	}
	b.ReportMetric(float64(ok.Load())/3, metric)
}

// order runs one Create order and one usage report of the rancher backend against a cluster
// and reports its latency and the requests Rancher served for it.
func (bw *benchWorld) order(b *testing.B, clusterID, label string) {
	settings := backends.Settings{"backend_url": bw.srv.URL, "username": "token-sim01", "password": "sim-secret",
		"cluster_id": clusterID, "verify_cert": false, "project_prefix": fmt.Sprintf("o%d-%s-", time.Now().UnixNano()%1e6, label),
		"namespace_labels": map[string]any{"gpu-pool": "h100-2x"}}
	be, _, err := rancher.New(backends.Params{Offering: "bench", Settings: settings, Components: scaleComponents, Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	res := backends.Resource{UUID: fmt.Sprintf("%032x", time.Now().UnixNano()), Name: "order", Slug: "order", ProjectSlug: "proj", CustomerSlug: "org",
		Limits: backends.Quantities{"cpu": 4, "ram": 8192, "gpu": 2}}
	bw.sim.ResetCalls()
	began := time.Now()
	info, err := be.(backends.Provisioner).Create(context.Background(), backends.CreateRequest{Resource: res, Name: "order"})
	if err != nil {
		b.Fatal(err)
	}
	res.BackendID = info.BackendID
	if _, err := be.(backends.UsageReporter).Usage(context.Background(), []backends.Resource{res}, backends.PeriodOf(time.Now()), true); err != nil {
		b.Fatal(err)
	}
	took := time.Since(began)
	v3, k8s := bw.sim.Total()
	b.ReportMetric(float64(took.Microseconds())/1000, "order_"+label+"_ms")
	b.ReportMetric(float64(v3+k8s), "order_"+label+"_requests")
	b.Logf("order against the %s cluster: %s, %d v3 + %d Kubernetes requests", label, took.Round(time.Millisecond), v3, k8s)
}
