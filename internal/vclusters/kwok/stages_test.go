package kwok

import (
	"bytes"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

func stageSpec(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var s map[string]any
	if err := yaml.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s["spec"].(map[string]any)
}

// With KWOK's fast delays the stages are KWOK's files byte for byte.
func TestFastStagesAreKWOKsOwn(t *testing.T) {
	got, err := Render(FastStages())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range StageFiles {
		want, _ := stageFiles.ReadFile("stages/" + name)
		if !bytes.Equal(got[name], want) {
			t.Errorf("%s changed with the fast delays", name)
		}
	}
	if d := stageSpec(t, got["node-heartbeat-with-lease.yaml"])["delay"].(map[string]any); d["durationMilliseconds"] != 600000.0 || d["jitterDurationMilliseconds"] != 610000.0 {
		t.Errorf("heartbeat delay %v", d)
	}
}

// The configured heartbeat interval and pod start latency become the stages' delays; nothing
// else of the stages changes.
func TestConfiguredDelays(t *testing.T) {
	got, err := Render(Stages{NodeStatusInterval: 20 * time.Second, NodeStatusJitter: 25 * time.Second, PodStartLatency: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	hb := stageSpec(t, got["node-heartbeat-with-lease.yaml"])
	if d := hb["delay"].(map[string]any); d["durationMilliseconds"] != 20000.0 || d["jitterDurationMilliseconds"] != 25000.0 {
		t.Errorf("heartbeat delay %v", d)
	}
	ready := stageSpec(t, got["pod-ready.yaml"])
	if d := ready["delay"].(map[string]any); d["durationMilliseconds"] != 2000.0 || d["jitterDurationMilliseconds"] != nil {
		t.Errorf("pod-ready delay %v", d)
	}
	orig, _ := stageFiles.ReadFile("stages/pod-ready.yaml")
	want := stageSpec(t, orig)
	if ready["next"].(map[string]any)["statusTemplate"] != want["next"].(map[string]any)["statusTemplate"] {
		t.Error("the pod-ready status template changed")
	}
	// Without a heartbeat interval the stage runs without delay (every heartbeat at once).
	got, _ = Render(Stages{})
	if _, has := stageSpec(t, got["node-heartbeat-with-lease.yaml"])["delay"]; has {
		t.Error("a zero interval kept a delay")
	}
}
