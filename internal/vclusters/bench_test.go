package vclusters

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/rancher"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/testenv"
	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// BenchmarkVirtualClusters measures the figures in one run (make bench-vclusters;
// tier 2, -benchtime 1x): the built program in start mode — its own kube-apiserver, etcd and
// kube-controller-manager (with the node-lifecycle controller) and KWOK heartbeating every Node —
// connects SITE_AGENT_VC_BENCH_CLUSTERS clusters (1,000) of 3 Nodes and 10 Pods to the Rancher
// simulator's tunnel server; it reports the time until all are connected and active, the
// program's RSS per connected cluster, the main API server's requests per second at steady state
// with the Lease duration used (SITE_AGENT_VC_BENCH_LEASE, 80 s: KWOK renews each Lease every
// 20 s), the reconnect storm after a Rancher restart, requests per second through one tunnel
// (and to a cluster Rancher reaches directly), and one order of the rancher backend through a
// tunnel next to a direct one.
func BenchmarkVirtualClusters(b *testing.B) {
	testenv.SkipUnderRace(b, "figures measured under the race detector mean nothing")
	if err := testenv.Gate(); err != nil {
		b.Skip(err)
	}
	n := benchEnvInt(b, "SITE_AGENT_VC_BENCH_CLUSTERS", 1000)
	lease := time.Duration(benchEnvInt(b, "SITE_AGENT_VC_BENCH_LEASE", 80)) * time.Second
	for range b.N {
		bw := newBenchWorld(b, lease)
		names := bw.createAll(b, n)
		bw.steadyState(b, lease)
		bw.reconnectStorm(b, names)
		id := bw.clusterID(names[0])
		bw.throughput(b, "/k8s/clusters/"+id+"/version", "tunnel_req_per_s")
		bw.throughput(b, "/k8s/clusters/c-m-direct/version", "direct_req_per_s")
		bw.order(b, "c-m-direct", "direct")
		bw.order(b, id, "tunnel")
		bw.p.kill()
	}
}

func benchEnvInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q", name, v)
	}
	return n
}

type benchWorld struct {
	sim      *ranchersim.Server
	srv      *httptest.Server
	addr     string
	p        *process
	stateDir string
	main     *rest.Config // the program's main API server
}

func newBenchWorld(b *testing.B, lease time.Duration) *benchWorld {
	bin, ok := kubeenv.BinDir()
	// scripts/etcd/build.sh's etcd (make bench-vclusters builds it): the API server then serves
	// consistent LISTs from its watch cache (tools/etcd/main.go says why); else the one in PATH.
	etcd, err := os.Getenv("SITE_AGENT_ETCD_BIN"), error(nil)
	if etcd == "" {
		etcd, err = exec.LookPath("etcd")
	}
	if !ok || err != nil {
		b.Fatalf("binaries missing in %s or etcd not in PATH: run scripts/kube/build.sh", bin)
	}
	b.Logf("etcd: %s", etcd)
	bw := &benchWorld{stateDir: b.TempDir()}
	// The program's defaults for reconnects and throttling; more setup workers for the burst.
	cfg := binaryConfig(b, bw.stateDir, "", "https://127.0.0.1:1", fmt.Sprintf("setup_concurrency: 16\ntunnel: {}\n"+
		"kwok:\n  mode: run\n  binary: %s\n  node_lease_duration: %s\n", kwokBinary(b), lease))
	cfg = rewrite(b, cfg, "log_level: info\n", "log_level: warn\n")
	cfg = rewrite(b, cfg, "  kubeconfig: \n", "  start:\n    kube_apiserver: "+filepath.Join(bin, "kube-apiserver")+
		"\n    etcd: "+etcd+"\n    kube_controller_manager: "+filepath.Join(bin, "kube-controller-manager")+
		"\n    etcd_unsafe_no_fsync: true\n    node_monitor_grace_period: "+lease.String()+"\n")
	// The simulator's address goes into the configuration; it serves once the program has started
	// its main API server, which is the simulator's directly reached cluster.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	bw.addr = ln.Addr().String()
	cfg = rewrite(b, cfg, "https://127.0.0.1:1", "https://"+bw.addr)
	bw.p = startBinary(b, cfg, "token-sim01:sim-secret", freePort(b))
	bw.main, err = clientcmd.BuildConfigFromFlags("", filepath.Join(bw.stateDir, "main-api", "admin.kubeconfig"))
	if err != nil {
		b.Fatal(err)
	}
	bw.sim = ranchersim.New(ranchersim.Options{Clusters: []string{"c-m-direct"},
		Upstream: &ranchersim.Upstream{Host: bw.main.Host, Token: bw.main.BearerToken, CAData: bw.main.CAData}})
	bw.srv = httptest.NewUnstartedServer(bw.sim)
	bw.srv.Listener = ln
	bw.srv.StartTLS()
	b.Cleanup(func() { bw.srv.Close(); bw.sim.CloseTunnels() })
	return bw
}

func (bw *benchWorld) clusterID(name string) string {
	info, _ := bw.sim.ClusterByName(name)
	return info.ID
}

// createAll posts n clusters and waits (polling every 2 s, so as not to load what it measures)
// until the program shows every one connected and Rancher has shown every one active; it reports
// both times and the program's RSS per cluster.
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
	var allConnected time.Duration
	everActive := map[string]bool{}
	last := time.Now()
	for deadline := began.Add(30 * time.Minute); ; time.Sleep(2 * time.Second) {
		connected := bw.connected(b, names)
		for _, info := range bw.sim.ImportedClusters() {
			if info.State == "active" {
				everActive[info.Name] = true
			}
		}
		if connected == n && allConnected == 0 {
			allConnected = time.Since(began)
		}
		if allConnected > 0 && len(everActive) >= n {
			break
		}
		if time.Since(last) > 30*time.Second {
			b.Logf("%s: %d of %d connected, %d active in rancher", time.Since(began).Round(time.Second), connected, n, len(everActive))
			last = time.Now()
		}
		if time.Now().After(deadline) {
			b.Fatalf("after 30 minutes %d of %d connected, %d active in rancher", connected, n, len(everActive))
		}
	}
	took := time.Since(began)
	time.Sleep(10 * time.Second) // a couple of ping intervals
	connected := bw.p.rssBytes()
	b.ReportMetric(allConnected.Seconds(), "all_connected_s")
	b.ReportMetric(took.Seconds(), "all_active_in_rancher_s")
	b.ReportMetric(float64(idle)/(1<<20), "rss_idle_MiB")
	b.ReportMetric(float64(connected)/(1<<20), "rss_connected_MiB")
	b.ReportMetric(float64(connected-idle)/float64(n)/(1<<20), "rss_MiB_per_cluster")
	return names
}

// connected counts the named clusters the program shows connected.
func (bw *benchWorld) connected(b *testing.B, names []string) int {
	_, body := bw.p.call(b, "GET", "/clusters", "")
	summary, _ := body["summary"].(map[string]any)
	n, _ := summary[string(StatusConnected)].(float64)
	return int(n)
}

// steadyState lets the clusters settle, then counts the main API server's requests over a
// minute (apiserver_request_total), in all and by resource.
func (bw *benchWorld) steadyState(b *testing.B, lease time.Duration) {
	time.Sleep(lease / 2)
	before, _ := bw.apiRequests(b)
	began := time.Now()
	time.Sleep(time.Minute)
	after, byResource := bw.apiRequests(b)
	secs := time.Since(began).Seconds()
	b.ReportMetric((after-before)/secs, "api_req_per_s")
	b.ReportMetric(lease.Seconds(), "node_lease_s")
	b.Logf("main API server: %.0f requests/s at steady state (Leases of %s, renewed every %s); since start, by resource and verb (over 0.5 %%): %s",
		(after-before)/secs, lease, lease/4, largest(byResource, after/200))
}

// apiRequests sums apiserver_request_total of the program's main API server.
func (bw *benchWorld) apiRequests(b *testing.B) (float64, map[string]float64) {
	rt, err := rest.TransportFor(bw.main)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := (&http.Client{Transport: rt, Timeout: 30 * time.Second}).Get(bw.main.Host + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	total, byResource := 0.0, map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		total += v
		byResource[label(line, "resource")+" "+label(line, "verb")] += v
	}
	return total, byResource
}

// largest prints the entries of counts of at least min, largest first.
func largest(counts map[string]float64, min float64) string {
	keys := slices.Collect(maps.Keys(counts))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(counts[b], counts[a]) })
	var out []string
	for _, k := range keys {
		if counts[k] >= min {
			out = append(out, fmt.Sprintf("%s %.0f", k, counts[k]))
		}
	}
	return strings.Join(out, ", ")
}

// label is a label's value in a Prometheus sample line ("" when it has none).
func label(line, name string) string {
	_, rest, ok := strings.Cut(line, name+`="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}

// reconnectStorm stops Rancher for 3 s (every tunnel drops) and measures, from its restart,
// when each cluster's agent session is back.
func (bw *benchWorld) reconnectStorm(b *testing.B, names []string) {
	ids := map[string]string{}
	for _, info := range bw.sim.ImportedClusters() {
		ids[info.Name] = info.ID
	}
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
	for deadline := began.Add(5 * time.Minute); len(back) < len(names) && time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		for _, name := range names {
			if _, ok := back[name]; !ok {
				if agent, _ := bw.sim.Sessions(ids[name]); agent {
					back[name] = time.Since(began)
				}
			}
		}
	}
	if len(back) < len(names) {
		b.Fatalf("only %d of %d clusters reconnected within 5 minutes", len(back), len(names))
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
