package rke2

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestInventoryRoundTrip(t *testing.T) {
	invs := []Inventory{
		{Cluster: testCluster, Role: RoleServer, Initial: true, Stage: StageInstall, Index: 0},
		{Cluster: testCluster, Role: RoleServer, Stage: StageRemove, Index: 4, Join: "prod-server-0"},
		{Cluster: testCluster, Role: RoleAgent, Stage: StageInstall, Index: 999, Join: "prod-server-2"},
	}
	for _, inv := range invs {
		got, ok, err := InventoryFromMetadata(inv.Metadata())
		if err != nil || !ok || !cmp.Equal(got, inv) {
			t.Errorf("metadata round trip of %+v: %+v, %v, %v", inv, got, ok, err)
		}
		got, ok, err = InventoryFromLabels(inv.Labels())
		if err != nil || !ok || !cmp.Equal(got, inv) {
			t.Errorf("label round trip of %+v: %+v, %v, %v", inv, got, ok, err)
		}
		checkWireLimits(t, inv)
	}
}

// checkWireLimits: Nova metadata keys and values ≤ 255, tags ≤ 60 without "/" or ",";
// Kubernetes label keys qualified names, values valid label values.
func checkWireLimits(t *testing.T, inv Inventory) {
	t.Helper()
	for k, v := range inv.Metadata() {
		if len(k) > 255 || len(v) > 255 || k == "" {
			t.Errorf("metadata %q=%q exceeds Nova's limits", k, v)
		}
	}
	for _, tag := range inv.Tags() {
		if len(tag) > 60 || strings.ContainsAny(tag, "/,") {
			t.Errorf("tag %q is not a valid Nova tag", tag)
		}
	}
	for k, v := range inv.Labels() {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			t.Errorf("label key %q: %v", k, errs)
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Errorf("label value %q: %v", v, errs)
		}
	}
}

func TestInventoryNotOurs(t *testing.T) {
	for _, m := range []map[string]string{nil, {}, {"foo": "bar"}} {
		if _, ok, err := InventoryFromMetadata(m); ok || err != nil {
			t.Errorf("%v: ok=%v err=%v, want not ours", m, ok, err)
		}
	}
}

func TestInventoryBroken(t *testing.T) {
	base := Inventory{Cluster: testCluster, Role: RoleAgent, Stage: StageInstall, Index: 3, Join: "c-server-0"}.Metadata()
	cases := []struct {
		key, value, want string
	}{
		{MetaCluster, "not-hex", MetaCluster},
		{MetaRole, "worker", MetaRole},
		{MetaRole, "", MetaRole},
		{MetaKind, "first", MetaKind},
		{MetaKind, "initial", "only a server can be the initial node"},
		{MetaStage, "draining", MetaStage},
		{MetaIndex, "-1", MetaIndex},
		{MetaIndex, "07", MetaIndex},
		{MetaIndex, "x", MetaIndex},
		{MetaJoin, "Bad_Name", MetaJoin},
	}
	for _, tc := range cases {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		m[tc.key] = tc.value
		_, ok, err := InventoryFromMetadata(m)
		if !ok || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%q: ok=%v err=%v, want an error naming %q", tc.key, tc.value, ok, err, tc.want)
		}
	}
	initial := Inventory{Cluster: testCluster, Role: RoleServer, Initial: true, Stage: StageInstall}.Labels()
	initial[LabelJoin] = "c-server-1"
	if _, _, err := InventoryFromLabels(initial); err == nil || !strings.Contains(err.Error(), LabelJoin) {
		t.Errorf("an initial server with a join target: %v", err)
	}
}

func TestNodeName(t *testing.T) {
	if got := NodeName("prod", RoleAgent, 12); got != "prod-agent-12" {
		t.Errorf("NodeName = %q", got)
	}
}
