package telemetry

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestDeclaredSeriesExistAtZeroAndAreForgotten(t *testing.T) {
	m := NewMetrics()
	m.DeclareOffering(uuidA, "HPC", "waldur", "rancher")
	m.DeclareOffering(uuidA, "HPC 2", "waldur", "rancher") // renamed by a reload
	m.DeclareOffering(uuidB, "Cloud", "waldur")
	before := time.Now()
	m.DeclareCycles("report", uuidA, 30*time.Minute, true)
	m.DeclareCycles("report", uuidB, 30*time.Minute, true)
	id := "e2ef000000000000000000000000000a"
	if v := testutil.ToFloat64(m.LastCycle.WithLabelValues("report", id)); v < float64(before.Unix()) {
		t.Fatalf("last cycle starts at %v, not now", v)
	}
	m.LastCycle.WithLabelValues("report", id).Set(42)
	m.DeclareCycles("report", uuidA, 30*time.Minute, false) // a reload keeps it
	if v := testutil.ToFloat64(m.LastCycle.WithLabelValues("report", id)); v != 42 {
		t.Fatalf("a reload reset the last cycle time to %v", v)
	}
	const want = `
# HELP site_agent_offering_info Always 1; names the offering of an offering_uuid.
# TYPE site_agent_offering_info gauge
site_agent_offering_info{name="Cloud",offering_uuid="e2ef000000000000000000000000000b"} 1
site_agent_offering_info{name="HPC 2",offering_uuid="e2ef000000000000000000000000000a"} 1
# HELP site_agent_upstream_errors_total Calls to an upstream (waldur, or the backend by name) that failed transiently after their retries.
# TYPE site_agent_upstream_errors_total counter
site_agent_upstream_errors_total{offering_uuid="e2ef000000000000000000000000000a",upstream="rancher"} 0
site_agent_upstream_errors_total{offering_uuid="e2ef000000000000000000000000000a",upstream="waldur"} 0
site_agent_upstream_errors_total{offering_uuid="e2ef000000000000000000000000000b",upstream="waldur"} 0
# HELP site_agent_cycles_total Mode cycles per offering by result.
# TYPE site_agent_cycles_total counter
site_agent_cycles_total{mode="report",offering_uuid="e2ef000000000000000000000000000a",result="error"} 0
site_agent_cycles_total{mode="report",offering_uuid="e2ef000000000000000000000000000a",result="ok"} 0
site_agent_cycles_total{mode="report",offering_uuid="e2ef000000000000000000000000000b",result="error"} 0
site_agent_cycles_total{mode="report",offering_uuid="e2ef000000000000000000000000000b",result="ok"} 0
# HELP site_agent_cycle_period_seconds Time between the cycles of a mode (plus up to 5% jitter).
# TYPE site_agent_cycle_period_seconds gauge
site_agent_cycle_period_seconds{mode="report"} 1800
# HELP site_agent_config_reloads_total Configuration reloads (SIGHUP) by result (success, failure: the running configuration stays).
# TYPE site_agent_config_reloads_total counter
site_agent_config_reloads_total{result="failure"} 0
site_agent_config_reloads_total{result="success"} 0
`
	names := []string{"site_agent_offering_info", "site_agent_upstream_errors_total", "site_agent_cycles_total",
		"site_agent_cycle_period_seconds", "site_agent_config_reloads_total"}
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	m.Forget(uuidA)
	n, err := testutil.GatherAndCount(m.Registry, "site_agent_offering_info", "site_agent_cycles_total", "site_agent_backend_degraded",
		"site_agent_cycle_duration_seconds", "site_agent_last_cycle_timestamp_seconds")
	if err != nil {
		t.Fatal(err)
	}
	if n != 1+2+1+1+1 { // offering B's
		t.Fatalf("%d series left after forgetting offering A", n)
	}
}
