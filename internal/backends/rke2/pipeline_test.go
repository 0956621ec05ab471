package rke2

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/secret"
)

// TestPipelineCreatesACluster runs the pure pieces end to end for both bootstrap modes: an
// order is evaluated and parsed, the planner is iterated against the world model, and every
// Create action's inventory goes through Nova metadata (Observe) and is rendered into
// cloud-init whose join address is the join target's — until the cluster is complete.
func TestPipelineCreatesACluster(t *testing.T) {
	for _, mode := range []string{BootstrapRancher, BootstrapRKE2} {
		t.Run(mode, func(t *testing.T) {
			s := goldenSettings(t, "bootstrap", mode)
			res := backends.Resource{UUID: testCluster, Name: "prod", Attributes: managedOrder("worker_nodes_count", 4.0)}
			e := &Evaluator{Settings: s, Flavors: cloudFlavors}
			if dec, why, err := e.Evaluate(context.Background(), backends.OrderReview{Type: "Create", Resource: res}); err != nil || dec != backends.Accept {
				t.Fatalf("evaluate: %v %s %v", dec, why, err)
			}
			spec, err := ParseSpec(s, res)
			if err != nil {
				t.Fatal(err)
			}
			runPipeline(t, s, &spec)
		})
	}
}

func runPipeline(t *testing.T, s *Settings, spec *ClusterSpec) {
	w := newWorld(t, 7)
	w.viaRancher = s.Bootstrap == BootstrapRancher
	d := Desired{Cluster: testCluster, Name: spec.Name, Servers: spec.Servers, Agents: spec.Agents, ViaRancher: w.viaRancher}
	addr := map[string]string{} // node name → its (fake) fixed IP
	for range 200 {
		var servers []ServerView
		var rnodes []RancherNodeView
		for _, n := range w.observe() {
			if n.VM != "" {
				servers = append(servers, ServerView{ID: "vm-" + n.Name, Name: n.Name, Status: n.VM, Metadata: n.Metadata()})
			}
			if n.Rancher != "" {
				rnodes = append(rnodes, RancherNodeView{ID: "m-" + n.Name, Name: n.Name, State: n.Rancher, Labels: n.Labels()})
			}
		}
		obs, err := Observe(testCluster, servers, rnodes)
		if err != nil {
			t.Fatal(err)
		}
		p := PlanPass(d, obs.Nodes)
		checkStrayBlind(t, d, servers, rnodes, p)
		if p.Done {
			w.checkFinal(d)
			if len(addr) != d.Servers+d.Agents {
				t.Errorf("%d nodes rendered, want %d", len(addr), d.Servers+d.Agents)
			}
			return
		}
		for _, a := range p.Actions {
			if a.Kind == Create {
				addr[a.Node] = fmt.Sprintf("10.0.0.%d", 11+len(addr))
				renderFor(t, s, spec, a, addr[a.Inventory.Join])
			}
		}
		w.apply(p)
		w.tick(false)
	}
	t.Fatal("the cluster was not complete after 200 passes")
}

func renderFor(t *testing.T, s *Settings, spec *ClusterSpec, a Action, joinAddr string) {
	t.Helper()
	sid := secret.New("sid-" + a.Node + "-single-use")
	defer sid.Forget()
	ud, err := s.CloudInit().Render(NewNodeConfig(s, spec, a.Node, a.Inventory, VaultCredentials{RoleID: "role", SecretID: sid}, joinAddr))
	if err != nil {
		t.Fatalf("%s: %v", a.Node, err)
	}
	text := string(ud.Bytes())
	hasServer := strings.Contains(text, "'https://"+joinAddr+":9345'")
	switch {
	case s.Bootstrap == BootstrapRancher && strings.Contains(text, ":9345"):
		t.Errorf("%s: rancher bootstrap must not point at a server", a.Node)
	case s.Bootstrap == BootstrapRKE2 && a.Inventory.Initial && strings.Contains(text, "server: "):
		t.Errorf("%s: the initial server must not have server:", a.Node)
	case s.Bootstrap == BootstrapRKE2 && !a.Inventory.Initial && (joinAddr == "" || !hasServer):
		t.Errorf("%s: joins through %s but its config does not point at %q", a.Node, a.Inventory.Join, joinAddr)
	}
}

// checkStrayBlind: a duplicate VM of an existing node (a create retried after a lost answer)
// is set aside by Observe and changes nothing in the plan.
func checkStrayBlind(t *testing.T, d Desired, servers []ServerView, rnodes []RancherNodeView, want Plan) {
	t.Helper()
	if len(servers) == 0 {
		return
	}
	dup := servers[0]
	dup.ID, dup.Status = "vm-duplicate", "BUILD"
	obs, err := Observe(testCluster, append(append([]ServerView(nil), servers...), dup), rnodes)
	if err != nil {
		t.Fatal(err)
	}
	if len(obs.Strays) != 1 || obs.Strays[0].Name != dup.Name {
		t.Fatalf("strays %+v, want the duplicate of %s", obs.Strays, dup.Name)
	}
	if got := PlanPass(d, obs.Nodes); summary(got) != summary(want) {
		t.Fatalf("a duplicate VM changed the plan: %q, want %q", summary(got), summary(want))
	}
}
