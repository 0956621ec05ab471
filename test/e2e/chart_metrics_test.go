package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var chartDir = filepath.Join("..", "..", "charts", "site-agent")

// Every metric the chart's alerts and dashboard name is one the agent exports: scraped from the
// built binary running every mode (polling and events) with errors to show, not from a list.
// `up` is Prometheus's own series for a scrape target.
func TestChartAlertsAndDashboardUseExportedMetrics(t *testing.T) {
	e := newOperatorEnv(t, "10ms")
	exported := scrapedNames(body(t, e.base+"/metrics"))
	rules, err := os.ReadFile(filepath.Join(chartDir, "templates", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dash, err := os.ReadFile(filepath.Join(chartDir, "dashboards", "site-agent.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, alert := range []string{"SiteAgentDown", "SiteAgentCyclesFailing", "SiteAgentCycleStuck", "SiteAgentBacklogGrowing",
		"SiteAgentEventListenerDisconnected", "SiteAgentUpstreamDegraded"} {
		if !strings.Contains(string(rules), "alert: "+alert+"\n") {
			t.Errorf("the PrometheusRule has no %s alert", alert)
		}
	}
	exprs := append(ruleExprs(string(rules)), dashboardQueries(t, dash)...)
	if len(exprs) < 30 {
		t.Fatalf("only %d expressions found in the rule and the dashboard", len(exprs))
	}
	used := map[string]bool{}
	for _, x := range exprs {
		for _, name := range metricNames(x) {
			used[name] = true
		}
	}
	// Names the templates build outside expr blocks (the offering-name join, the leader filter).
	for _, name := range regexp.MustCompile(`\bsite_agent_[a-z_]+`).FindAllString(string(rules)+string(dash), -1) {
		used[name] = true
	}
	for name := range used {
		if !exported[name] && name != "up" {
			t.Errorf("the chart uses %s, which the agent does not export", name)
		}
	}
	t.Logf("%d expressions, %d metric names", len(exprs), len(used))
}

// scrapedNames are the series names of a /metrics page.
func scrapedNames(page string) map[string]bool {
	names := map[string]bool{}
	for _, line := range strings.Split(page, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			names[line[:i]] = true
		}
	}
	return names
}

// ruleExprs are the expr values of a rule template (one line, or a block scalar).
func ruleExprs(text string) []string {
	var out []string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		key, value, ok := strings.Cut(strings.TrimSpace(lines[i]), "expr: ")
		if !ok || key != "" {
			continue
		}
		if value != "|-" && value != "|" {
			out = append(out, value)
			continue
		}
		indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
		var block []string
		for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || len(lines[i+1])-len(strings.TrimLeft(lines[i+1], " ")) > indent) {
			i++
			block = append(block, lines[i])
		}
		out = append(out, strings.Join(block, "\n"))
	}
	return out
}

// dashboardQueries are the panels' expressions and the variables' queries of a dashboard.
func dashboardQueries(t *testing.T, data []byte) []string {
	t.Helper()
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				// A data source variable's query is the data source's type, not PromQL.
				if s, ok := x.(string); ok && (k == "expr" || k == "query" || k == "definition") && v["type"] != "datasource" {
					out = append(out, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	return out
}

var (
	helmAction  = regexp.MustCompile(`\{\{.*?\}\}`)
	quoted      = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	matchers    = regexp.MustCompile(`\{[^{}]*\}`)
	ranges      = regexp.MustCompile(`\[[^\]]*\]`)
	grouping    = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	labelValues = regexp.MustCompile(`label_values\(([^,)]*),[^)]*\)`)
	identifier  = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	keywords    = []string{"and", "or", "unless", "bool", "offset", "inf", "nan", "by", "without", "on", "ignoring", "group_left", "group_right"}
)

// metricNames are the metric names a PromQL expression (or a Grafana variable query) selects:
// identifiers that are not functions, keywords, label names or values, durations or templating.
func metricNames(expr string) []string {
	x := helmAction.ReplaceAllString(expr, " ")
	x = labelValues.ReplaceAllString(x, "$1")
	x = quoted.ReplaceAllString(x, `""`)
	x = matchers.ReplaceAllString(x, " ")
	x = ranges.ReplaceAllString(x, " ")
	x = grouping.ReplaceAllString(x, " ")
	var names []string
	for _, loc := range identifier.FindAllStringIndex(x, -1) {
		name := x[loc[0]:loc[1]]
		if loc[0] > 0 && (x[loc[0]-1] == '$' || x[loc[0]-1] == '.' || (x[loc[0]-1] >= '0' && x[loc[0]-1] <= '9')) {
			continue // a variable, or part of a number (1e3)
		}
		if rest := strings.TrimLeft(x[loc[1]:], " \t\n"); strings.HasPrefix(rest, "(") || slices.Contains(keywords, name) {
			continue // a function or a keyword
		}
		names = append(names, name)
	}
	return names
}

// The extraction finds what it must, so a misspelt metric cannot pass unseen.
func TestMetricNamesOfAnExpression(t *testing.T) {
	cases := map[string]string{
		`sum by (mode, result) (rate(site_agent_cycle_total{job=~"$job", x="a b"}[$__rate_interval])) * 60`: "site_agent_cycle_total",
		`absent(up{ {{- $sel -}} } == 1)`: "up",
		`(time() - max(site_agent_last{a="b"} and on (instance) (site_agent_leader == 1))) > on (mode) group_left () 3 * x`: "site_agent_last site_agent_leader x",
		`histogram_quantile(0.95, sum by (le) (rate(foo_bucket[5m]))) * 1e3 {{ $name }}`:                                    "foo_bucket",
		`label_values(site_agent_build_info{job=~"$job"}, job)`:                                                             "site_agent_build_info",
	}
	for expr, want := range cases {
		if got := strings.Join(metricNames(expr), " "); got != want {
			t.Errorf("metricNames(%q) = %q, want %q", expr, got, want)
		}
	}
}
