package novainfra_test

import (
	"context"
	"strings"
	"testing"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/sim/openstacksim"
)

// The largest order here: 5 servers of m1.small (1 vCPU, 2048 MB, 64 GB system volume) and
// 3 agents (the worker_nodes limit) at the agent minimum (1 vCPU, 1024 MB, 64 GB): 8 cores,
// 13312 MB, 8 instances, 512 GB in 8 volumes, 8 ports.
func headroomCheck(t *testing.T, sim *openstacksim.Server, url string, top, osKeys map[string]any) backends.Check {
	t.Helper()
	three := 3.0
	in := simInfraOn(t, sim, url, top, osKeys, backends.Component{Name: "worker_nodes", AccountingType: "limit", Limit: &three})
	for _, ch := range in.Diagnose(context.Background()) {
		if ch.Name == "openstack quota headroom" {
			return ch
		}
	}
	t.Fatal("no quota headroom check")
	return backends.Check{}
}

func TestDiagnoseQuotaHeadroom(t *testing.T) {
	w := newPerClusterWorld(t)
	ch := headroomCheck(t, w.sim, w.url, nil, nil)
	if !ch.OK || !strings.Contains(ch.Detail, "nova cores 8 of 20 free") || !strings.Contains(ch.Detail, "cinder gigabytes 512 of 1000 free") ||
		!strings.Contains(ch.Detail, "3 agents") {
		t.Fatalf("default quotas: %+v", ch)
	}
	admin := w.sim.AdminProjectID()
	w.sim.SetQuota("nova", admin, "cores", 6)
	w.sim.SetQuota("cinder", admin, "volumes", 5)
	w.sim.AddServer(admin, 1, 512) // usage counts: 5 cores free
	ch = headroomCheck(t, w.sim, w.url, nil, nil)
	for _, want := range []string{"nova cores: needs 8, 5 free (quota 6, 1 used), short by 3", "cinder volumes: needs 8, 5 free (quota 5, 0 used), short by 3"} {
		if ch.OK || !strings.Contains(ch.Detail, want) {
			t.Errorf("short quotas: %+v, want %q", ch, want)
		}
	}
	if strings.Contains(ch.Detail, "ram:") {
		t.Errorf("RAM is not short: %s", ch.Detail)
	}
	// The tenant maxima cap the largest order: 5 vCPU fit into the 5 free cores.
	ch = headroomCheck(t, w.sim, w.url, map[string]any{"managed_rancher_tenant_max_cpu": 5}, nil)
	if strings.Contains(ch.Detail, "nova cores") {
		t.Errorf("capped at the tenant maximum of 5 cores: %+v", ch)
	}
}

func TestDiagnoseQuotaHeadroomPerCluster(t *testing.T) {
	w := newPerClusterWorld(t)
	pc := map[string]any{"tenant": "per_cluster"}
	ch := headroomCheck(t, w.sim, w.url, tenantMaxima, pc) // 500 GB < 512 GB
	if ch.OK || !strings.Contains(ch.Detail, "cinder gigabytes: needs 512, the cluster's project gets 500 (short by 12)") {
		t.Fatalf("maxima 16 vCPU / 32 GB / 500 GB: %+v", ch)
	}
	ch = headroomCheck(t, w.sim, w.url, map[string]any{"managed_rancher_tenant_max_cpu": 16, "managed_rancher_tenant_max_ram": 32, "managed_rancher_tenant_max_disk": 600}, pc)
	if !ch.OK || !strings.Contains(ch.Detail, "per_cluster") || !strings.Contains(ch.Detail, "nova cores 16") {
		t.Fatalf("maxima 16 vCPU / 32 GB / 600 GB: %+v", ch)
	}
	ch = headroomCheck(t, w.sim, w.url, map[string]any{"managed_rancher_tenant_max_cpu": 6, "managed_rancher_tenant_max_ram": 8, "managed_rancher_tenant_max_disk": 500}, pc)
	for _, want := range []string{"nova cores: needs 8, the cluster's project gets 6 (short by 2)", "nova ram: needs 13312, the cluster's project gets 8192 (short by 5120)"} {
		if ch.OK || !strings.Contains(ch.Detail, want) {
			t.Errorf("maxima too small: %+v, want %q", ch, want)
		}
	}
	if w.sim.ProjectCount() != 1 {
		t.Error("diagnostics made a project")
	}
}
