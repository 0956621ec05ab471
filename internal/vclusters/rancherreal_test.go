package vclusters

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Three virtual clusters imported into the real Rancher become Active there — Connected through
// the agent session and Rancher's `/ping` check over the steve session — with their Nodes
// (made by Rancher's nodesyncer from the Nodes it lists through the tunnel) and their capacity,
// allocatable and requested totals; Rancher's proxy reaches their Nodes through the tunnel; a
// the product's rancher backend runs an order in one of them through Rancher and the tunnel; a
// DELETE through the tool's API removes them from Rancher.
func TestRealRancherVirtualClustersBecomeActive(t *testing.T) {
	w := newRancherWorld(t, "info", "sync:\n  pod_resources_interval: 2s\n")
	const n = 3
	began := time.Now()
	for i := range n {
		if code, body := w.p.call(t, "POST", "/clusters", `{"name":"`+w.name(i)+`"}`); code != 201 {
			t.Fatalf("create: %d %v", code, body)
		}
	}
	ids := make([]string, n)
	for i := range n {
		c := w.waitActive(t, w.name(i), 3*time.Minute)
		ids[i] = c.ID
		t.Logf("%s (%s) active in Rancher %s after the POST", c.Name, c.ID, time.Since(began).Round(time.Second))
	}
	for i := range n {
		w.checkTotals(t, w.name(i), ids[i])
		w.checkNodes(t, ids[i])
		w.checkProxiedNodes(t, ids[i])
	}
	w.order(t, w.name(0), ids[0])
	w.checkDials(t)
	for i := range n {
		start := time.Now()
		if code, body := w.p.call(t, "DELETE", "/clusters/"+w.name(i), ""); code != 200 {
			t.Fatalf("delete %s: %d %v", w.name(i), code, body)
		}
		if _, found := w.cluster(t, w.name(i)); found {
			t.Errorf("Rancher still lists %s after the tool's DELETE answered", w.name(i))
		}
		t.Logf("%s deleted (gone from Rancher) in %s", w.name(i), time.Since(start).Round(time.Second))
	}
	if _, body := w.p.call(t, "GET", "/clusters", ""); len(body["clusters"].([]any)) != 0 {
		t.Errorf("the tool still lists clusters: %v", body["clusters"])
	}
}

// waitActive polls Rancher every 2 s until the cluster is active and Connected.
func (w *rancherWorld) waitActive(t testing.TB, name string, limit time.Duration) rancherCluster {
	t.Helper()
	for deadline := time.Now().Add(limit); ; time.Sleep(2 * time.Second) {
		c, found := w.cluster(t, name)
		if found && c.State == "active" && c.condition("Connected") == "True" {
			return c
		}
		if time.Now().After(deadline) {
			_, tool := w.p.call(t, "GET", "/clusters/"+name, "")
			t.Fatalf("%s not active in Rancher after %s: state %q, Connected %q, conditions %v; the tool: %v",
				name, limit, c.State, c.condition("Connected"), c.Conditions, tool)
		}
	}
}

// checkTotals: Rancher's capacity and allocatable are the 3 Nodes' (16 CPUs, 64Gi, 110 pods
// each), requested counts the 10 Pods of 100m and 128Mi (from the Nodes' pod-requests
// annotations, written every 2 s here). Rancher's clusterstats aggregator computes them after
// its nodesyncer has given every v3 node its roles, retrying with its controller's backoff until
// then: under load that took up to 1 min 47 s for the first cluster of a run.
func (w *rancherWorld) checkTotals(t *testing.T, name, id string) {
	t.Helper()
	var c rancherCluster
	began := time.Now()
	for deadline := began.Add(5 * time.Minute); ; time.Sleep(2 * time.Second) {
		c, _ = w.cluster(t, name)
		r := c.Requested
		if c.Capacity["cpu"] == "48" && c.Capacity["pods"] == "330" && c.Allocatable["cpu"] == "48" &&
			r["pods"] == "10" && r["cpu"] == "1" && r["memory"] == "1280Mi" {
			if waited := time.Since(began); waited > 5*time.Second {
				t.Logf("%s: Rancher's totals %s after the cluster was active", name, waited.Round(time.Second))
			}
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s (%s): capacity %v allocatable %v requested %v limits %v", name, id, c.Capacity, c.Allocatable, c.Requested, c.Limits)
			return
		}
	}
}

// checkNodes: Rancher lists the cluster's 3 Nodes, active, one control plane and two workers.
func (w *rancherWorld) checkNodes(t *testing.T, id string) {
	t.Helper()
	var ns []rancherNode
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Second) {
		ns = w.nodes(t, id)
		active, cp, workers := 0, 0, 0
		for _, n := range ns {
			if n.State == "active" && n.Capacity["cpu"] == "16" {
				active++
			}
			if n.ControlPlane {
				cp++
			}
			if n.Worker {
				workers++
			}
		}
		if len(ns) == 3 && active == 3 && cp == 1 && workers == 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: Rancher's nodes %+v", id, ns)
			return
		}
	}
}

// checkProxiedNodes: Rancher's /k8s/clusters/<id> proxy lists the cluster's 3 Nodes through the
// tunnel (only its own: the tool scopes Node lists) and namespaces without the tool's tenant
// namespaces.
func (w *rancherWorld) checkProxiedNodes(t *testing.T, id string) {
	t.Helper()
	var list struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := w.admin.Do(t.Context(), http.MethodGet, "/k8s/clusters/"+id+"/api/v1/nodes", nil, &list); err != nil {
		t.Fatalf("proxied nodes of %s: %v", id, err)
	}
	if len(list.Items) != 3 {
		b, _ := json.Marshal(list)
		t.Errorf("proxied nodes of %s: %s", id, b)
	}
	var nss corev1.NamespaceList
	if err := w.admin.Do(t.Context(), http.MethodGet, "/k8s/clusters/"+id+"/api/v1/namespaces", nil, &nss); err != nil {
		t.Fatalf("proxied namespaces of %s: %v", id, err)
	}
	if names := namespaceNames(nss); !slices.Contains(names, "kube-system") || slices.ContainsFunc(names, isTenantNamespace) {
		t.Errorf("proxied namespaces of %s: %v, want kube-system and no tenant namespace", id, names)
	}
}

// checkDials: Rancher opened connections through both sessions (its /ping check and API calls
// through the steve session; its proxy through the agent session) and asked for no target the
// tool refuses — a refused one ends the session (remotedialer v0.6.1) and keeps the cluster
// Connected=False, as the first hand trial found.
func (w *rancherWorld) checkDials(t *testing.T) {
	t.Helper()
	resp, err := http.Get(w.p.api + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	m := string(data)
	for _, line := range []string{`site_agent_vclusters_tunnel_dials_total{result="allowed",session="agent"}`,
		`site_agent_vclusters_tunnel_dials_total{result="allowed",session="steve"}`} {
		if v := metricValue(m, line); v < 1 {
			t.Errorf("%s = %v, want ≥ 1", line, v)
		}
	}
	for _, s := range []string{"agent", "steve"} {
		line := `site_agent_vclusters_tunnel_dials_total{result="denied",session="` + s + `"}`
		if v := metricValue(m, line); v != 0 {
			t.Errorf("%s = %v: Rancher asked for a target the tool refuses", line, v)
		}
	}
	t.Logf("reconnects: agent %v, steve %v", metricValue(m, `site_agent_vclusters_tunnel_reconnects_total{session="agent"}`),
		metricValue(m, `site_agent_vclusters_tunnel_reconnects_total{session="steve"}`))
}

// metricValue is the value of the sample named exactly so (0 when absent).
func metricValue(text, sample string) float64 {
	for _, l := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(l, sample+" "); ok {
			v, _ := strconv.ParseFloat(rest, 64)
			return v
		}
	}
	return 0
}
