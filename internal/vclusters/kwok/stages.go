package kwok

import (
	"embed"
	"fmt"
	"time"

	"sigs.k8s.io/yaml"
)

//go:embed stages/*.yaml
var stageFiles embed.FS

// StageFiles are the stages the controller runs with, in the order they are passed.
var StageFiles = []string{"node-initialize.yaml", "node-heartbeat-with-lease.yaml", "pod-ready.yaml", "pod-complete.yaml", "pod-delete.yaml"}

// Stages is what the configuration changes in KWOK's fast stages.
type Stages struct {
	// NodeStatusInterval and NodeStatusJitter delay the node-heartbeat-with-lease stage: how
	// often a Ready Node's status (conditions' lastHeartbeatTime) is refreshed besides its Lease
	// (KWOK's: 600 s plus up to 610 s).
	NodeStatusInterval, NodeStatusJitter time.Duration
	// PodStartLatency and PodStartJitter delay the pod-ready stage: how long a bound Pod stays
	// Pending before it runs (KWOK's fast stages: none).
	PodStartLatency, PodStartJitter time.Duration
}

// FastStages are KWOK's fast stages unchanged.
func FastStages() Stages {
	return Stages{NodeStatusInterval: 600 * time.Second, NodeStatusJitter: 610 * time.Second}
}

// Render returns the stage files with the configured delays, by file name.
func Render(s Stages) (map[string][]byte, error) {
	out := make(map[string][]byte, len(StageFiles))
	for _, name := range StageFiles {
		raw, err := stageFiles.ReadFile("stages/" + name)
		if err != nil {
			return nil, err
		}
		switch name {
		case "node-heartbeat-with-lease.yaml":
			raw, err = withDelay(raw, s.NodeStatusInterval, s.NodeStatusJitter)
		case "pod-ready.yaml":
			raw, err = withDelay(raw, s.PodStartLatency, s.PodStartJitter)
		}
		if err != nil {
			return nil, fmt.Errorf("stage %s: %w", name, err)
		}
		out[name] = raw
	}
	return out, nil
}

// withDelay sets spec.delay (KWOK's durationMilliseconds and jitterDurationMilliseconds; the
// jitter is the latest the stage may run); no delay removes it.
func withDelay(raw []byte, delay, jitter time.Duration) ([]byte, error) {
	var stage map[string]any
	if err := yaml.Unmarshal(raw, &stage); err != nil {
		return nil, err
	}
	spec, ok := stage["spec"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("no spec")
	}
	if cur, ok := spec["delay"].(map[string]any); ok && delay > 0 &&
		toMillis(cur["durationMilliseconds"]) == delay.Milliseconds() && toMillis(cur["jitterDurationMilliseconds"]) == jitter.Milliseconds() {
		return raw, nil // unchanged: keep the upstream file byte for byte
	}
	switch {
	case delay <= 0 && jitter <= 0:
		if _, had := spec["delay"]; !had {
			return raw, nil
		}
		delete(spec, "delay")
	default:
		d := map[string]any{"durationMilliseconds": delay.Milliseconds()}
		if jitter > 0 {
			d["jitterDurationMilliseconds"] = jitter.Milliseconds()
		}
		spec["delay"] = d
	}
	return yaml.Marshal(stage)
}

func toMillis(v any) int64 {
	switch n := v.(type) {
	case float64:
		return int64(n)
	case int64:
		return n
	}
	return -1
}
