package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestHelmPrometheusRuleAndDashboard: the alerts and the dashboard render only when asked; the
// rules select the chart's scrape job and take their thresholds from the values, their
// annotations keep Prometheus's own templates; the dashboard ConfigMap carries the sidecar's
// label and dashboards/site-agent.json unchanged.
func TestHelmPrometheusRuleAndDashboard(t *testing.T) {
	if objs := render(t); find(objs, "PrometheusRule") != nil || find(objs, "ConfigMap") != nil {
		t.Fatal("the defaults render alerts or a dashboard")
	}
	objs := render(t, "--set", "metrics.prometheusRule.enabled=true,metrics.prometheusRule.stuckCycleFactor=5,"+
		"metrics.prometheusRule.backlogFor=45m,metrics.grafanaDashboard.enabled=true,metrics.prometheusRule.labels.release=kp")
	rule := find(objs, "PrometheusRule")
	if rule == nil || rule.GetNamespace() != "site-agent" || rule.GetLabels()["release"] != "kp" {
		t.Fatalf("PrometheusRule %v", rule)
	}
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	alerts := map[string]map[string]any{}
	for _, g := range groups {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			m := r.(map[string]any)
			alerts[m["alert"].(string)] = m
		}
	}
	for _, name := range []string{"SiteAgentDown", "SiteAgentNoLeader", "SiteAgentCyclesFailing", "SiteAgentCycleStuck",
		"SiteAgentBacklogGrowing", "SiteAgentEventListenerDisconnected", "SiteAgentUpstreamDegraded"} {
		a := alerts[name]
		if a == nil {
			t.Errorf("no %s alert", name)
			continue
		}
		expr, _ := a["expr"].(string)
		if !strings.Contains(expr, `job="agent-site-agent-metrics", namespace="site-agent"`) || strings.Contains(expr, "{{") {
			t.Errorf("%s does not select the chart's scrape job: %s", name, expr)
		}
		ann, _ := a["annotations"].(map[string]any)
		if ann["summary"] == nil || a["labels"].(map[string]any)["severity"] == nil {
			t.Errorf("%s lacks a summary or a severity", name)
		}
	}
	if expr := alerts["SiteAgentCycleStuck"]["expr"].(string); !strings.Contains(expr, "(5 * max by (namespace, mode) (site_agent_cycle_period_seconds") {
		t.Errorf("stuckCycleFactor not applied: %s", expr)
	}
	if alerts["SiteAgentBacklogGrowing"]["for"] != "45m" {
		t.Errorf("backlogFor not applied: %v", alerts["SiteAgentBacklogGrowing"]["for"])
	}
	if s := alerts["SiteAgentCyclesFailing"]["annotations"].(map[string]any)["summary"].(string); !strings.Contains(s, "{{ $labels.name }}") {
		t.Errorf("the alert's own template was rendered away: %q", s)
	}
	checkDashboard(t, find(objs, "ConfigMap"))
	out, code := run(t, helm(t), "template", "agent", chart, "--set", "metrics.prometheusRule.backlogFor=soon")
	if code == 0 || !strings.Contains(out, "metrics.prometheusRule.backlogFor") {
		t.Errorf("a bad duration was accepted: exit %d\n%s", code, out)
	}
}

// checkDashboard: the ConfigMap carries the sidecar's label and dashboards/site-agent.json.
func checkDashboard(t *testing.T, cm *unstructured.Unstructured) {
	t.Helper()
	if cm == nil || cm.GetLabels()["grafana_dashboard"] != "1" {
		t.Fatalf("dashboard ConfigMap %v", cm)
	}
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	file, err := os.ReadFile(filepath.Join(chart, "dashboards", "site-agent.json"))
	if err != nil {
		t.Fatal(err)
	}
	var inMap, inFile map[string]any
	if err := json.Unmarshal([]byte(data["site-agent.json"]), &inMap); err != nil {
		t.Fatalf("the ConfigMap's dashboard is not JSON: %v", err)
	}
	_ = json.Unmarshal(file, &inFile)
	if !reflect.DeepEqual(inMap, inFile) || inMap["uid"] != "site-agent" {
		t.Error("the ConfigMap's dashboard differs from dashboards/site-agent.json")
	}
}
