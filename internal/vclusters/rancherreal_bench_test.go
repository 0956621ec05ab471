package vclusters

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/testenv"
	"github.com/waldur/site-agent/internal/testenv/kubeenv"
)

// BenchmarkVirtualClustersRealRancher measures what the tool exists for (issue 16 item 6; make
// bench-vclusters-rancher; tier 2, -benchtime 1x): the built program in start mode connects
// virtual clusters of 3 Nodes and 10 Pods to the real Rancher of scripts/rancher/up.sh in steps
// (SITE_AGENT_VC_RANCHER_STEPS, default 0,10,50,100 clusters). At each step, once every
// cluster is active and Connected in Rancher and 30 s have passed, it reads Rancher's RSS and
// its CPU over 30 s (from /proc: the rancher process up.sh started, and the whole stack with
// its kube-apiserver, controller manager and etcd), then the latency of
// SITE_AGENT_VC_RANCHER_SAMPLES (200) sequential admin GETs of /v3/clusters and of
// /k8s/clusters/<id>/api/v1/nodes round-robin over the connected clusters (at 0 clusters:
// `local`, which Rancher reaches directly, not through a tunnel). It prints a table.
func BenchmarkVirtualClustersRealRancher(b *testing.B) {
	testenv.SkipUnderRace(b, "figures measured under the race detector mean nothing")
	if err := testenv.Gate(); err != nil {
		b.Skip(err)
	}
	steps := benchSteps(b)
	samples := benchEnvInt(b, "SITE_AGENT_VC_RANCHER_SAMPLES", 200)
	for range b.N {
		w := newRancherWorld(b, "warn", "")
		var rows []stepFigures
		var ids []string
		for _, n := range steps {
			began := time.Now()
			for i := len(ids); i < n; i++ {
				if code, body := w.p.call(b, "POST", "/clusters", `{"name":"`+w.name(i)+`"}`); code != 201 {
					b.Fatalf("create: %d %v", code, body)
				}
				ids = append(ids, "")
			}
			w.waitAllActive(b, ids, 30*time.Minute)
			f := stepFigures{clusters: n, toActive: time.Since(began)}
			time.Sleep(30 * time.Second)
			f.rss, f.stackRSS, f.cpu = w.rancherUsage(b, 30*time.Second)
			f.v3 = w.latency(b, samples, func(int) string { return "/v3/clusters" })
			f.proxied = w.latency(b, samples, func(i int) string {
				if len(ids) == 0 {
					return "/k8s/clusters/local/api/v1/nodes"
				}
				return "/k8s/clusters/" + ids[i%len(ids)] + "/api/v1/nodes"
			})
			rows = append(rows, f)
			fmt.Fprintf(os.Stderr, "step %d clusters: %s\n", n, f)
		}
		printFigures(b, rows)
	}
}

type stepFigures struct {
	clusters      int
	toActive      time.Duration
	rss, stackRSS int64   // bytes
	cpu           float64 // cores, averaged over the window
	v3, proxied   [2]time.Duration
}

func (f stepFigures) String() string {
	return fmt.Sprintf("active after %s, rancher RSS %d MiB (stack %d MiB), CPU %.0f%% of a core, /v3/clusters p50/p99 %s/%s, proxied nodes p50/p99 %s/%s",
		f.toActive.Round(time.Second), f.rss>>20, f.stackRSS>>20, 100*f.cpu, ms(f.v3[0]), ms(f.v3[1]), ms(f.proxied[0]), ms(f.proxied[1]))
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + " ms"
}

func benchSteps(b *testing.B) []int {
	v := os.Getenv("SITE_AGENT_VC_RANCHER_STEPS")
	if v == "" {
		return []int{0, 10, 50, 100}
	}
	var steps []int
	for _, s := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 || (len(steps) > 0 && n < steps[len(steps)-1]) {
			b.Fatalf("SITE_AGENT_VC_RANCHER_STEPS=%q: ascending cluster counts, e.g. 0,10,50,100", v)
		}
		steps = append(steps, n)
	}
	return steps
}

// waitAllActive polls Rancher's cluster list every 5 s until every one of the first len(ids)
// clusters is active and Connected, filling in their ids.
func (w *rancherWorld) waitAllActive(b *testing.B, ids []string, limit time.Duration) {
	began, last := time.Now(), time.Now()
	for {
		var cs []rancherCluster
		if err := w.admin.List(b.Context(), "/v3/clusters", &cs); err != nil {
			fmt.Fprintf(os.Stderr, "%s: rancher: %v\n", time.Since(began).Round(time.Second), err) // a slow answer under load: ask again
		}
		byName := map[string]rancherCluster{}
		for _, c := range cs {
			byName[c.Name] = c
		}
		active := 0
		for i := range ids {
			if c := byName[w.name(i)]; c.State == "active" && c.condition("Connected") == "True" {
				ids[i] = c.ID
				active++
			}
		}
		if active == len(ids) {
			return
		}
		if time.Since(last) > 30*time.Second {
			fmt.Fprintf(os.Stderr, "%s: %d of %d active in Rancher\n", time.Since(began).Round(time.Second), active, len(ids))
			last = time.Now()
		}
		if time.Since(began) > limit {
			b.Fatalf("after %s only %d of %d clusters active in Rancher", limit, active, len(ids))
		}
		time.Sleep(5 * time.Second)
	}
}

// rancherUsage reads the RSS of Rancher (and of its whole stack) and Rancher's CPU use over
// window, in cores.
func (w *rancherWorld) rancherUsage(b *testing.B, window time.Duration) (rss, stack int64, cores float64) {
	pids := map[string]int{}
	for _, name := range []string{"rancher", "kube-apiserver", "kube-controller-manager", "etcd"} {
		data, err := os.ReadFile(filepath.Join(w.env.State, "run", name+".pid"))
		pid, perr := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || perr != nil {
			b.Fatalf("pid of %s: %v %v", name, err, perr)
		}
		pids[name] = pid
	}
	if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pids["rancher"])); strings.TrimSpace(string(comm)) != "rancher" {
		b.Fatalf("pid %d is %q, not rancher", pids["rancher"], comm)
	}
	before, t0 := cpuTicks(b, pids["rancher"]), time.Now()
	time.Sleep(window)
	after, secs := cpuTicks(b, pids["rancher"]), time.Since(t0).Seconds()
	for name, pid := range pids {
		r := kubeenv.RSSBytes(pid)
		if name == "rancher" {
			rss = r
		}
		stack += r
	}
	return rss, stack, float64(after-before) / 100 / secs // USER_HZ is 100 on Linux
}

// cpuTicks is utime + stime of the process (fields 14 and 15 of /proc/<pid>/stat).
func cpuTicks(b *testing.B, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name (field 2) is in parentheses and may hold spaces: count after it.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	u, _ := strconv.ParseInt(fields[11], 10, 64)
	s, _ := strconv.ParseInt(fields[12], 10, 64)
	return u + s
}

// latency sends n sequential admin GETs (path(i) for the i-th) and returns their p50 and p99; a
// failed request (the client gives up after a minute) counts with the time it took and is
// reported.
func (w *rancherWorld) latency(b *testing.B, n int, path func(int) string) [2]time.Duration {
	times := make([]time.Duration, n)
	failed := 0
	for i := range n {
		began := time.Now()
		if err := w.admin.Do(b.Context(), http.MethodGet, path(i), nil, nil); err != nil {
			failed++
			fmt.Fprintf(os.Stderr, "GET %s: %v\n", path(i), err)
		}
		times[i] = time.Since(began)
	}
	if failed > 0 {
		b.Errorf("%d of %d GETs of %s… failed", failed, n, path(0))
	}
	slices.Sort(times)
	return [2]time.Duration{times[n*50/100], times[min(n-1, n*99/100)]}
}

// printFigures prints the table and reports the last step's figures per connected cluster
// (differences from the first step divided by the clusters added).
func printFigures(b *testing.B, rows []stepFigures) {
	fmt.Printf("\nReal Rancher v2.12.0 with virtual clusters of 3 Nodes and 10 Pods (%s)\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Printf("%8s | %9s | %11s | %13s | %9s | %20s | %20s\n", "clusters", "to active", "rancher RSS", "stack RSS", "CPU", "/v3/clusters p50/p99", "proxied nodes p50/99")
	for _, f := range rows {
		fmt.Printf("%8d | %8.0fs | %7d MiB | %9d MiB | %8.1f%% | %20s | %20s\n", f.clusters, f.toActive.Seconds(), f.rss>>20, f.stackRSS>>20,
			100*f.cpu, ms(f.v3[0])+" / "+ms(f.v3[1]), ms(f.proxied[0])+" / "+ms(f.proxied[1]))
	}
	first, last := rows[0], rows[len(rows)-1]
	if added := last.clusters - first.clusters; added > 0 {
		rss := float64(last.rss-first.rss) / float64(added) / (1 << 20)
		cpu := 1000 * (last.cpu - first.cpu) / float64(added)
		fmt.Printf("per connected cluster (%d → %d): Rancher RSS %.1f MiB, CPU %.1f millicores\n\n", first.clusters, last.clusters, rss, cpu)
		b.ReportMetric(rss, "rancher_MiB_per_cluster")
		b.ReportMetric(cpu, "rancher_mcpu_per_cluster")
	}
	b.ReportMetric(last.toActive.Seconds(), "last_step_to_active_s")
	b.ReportMetric(float64(last.v3[1].Microseconds())/1000, "v3_clusters_p99_ms")
	b.ReportMetric(float64(last.proxied[1].Microseconds())/1000, "proxied_nodes_p99_ms")
}
