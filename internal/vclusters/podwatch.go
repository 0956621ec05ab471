package vclusters

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podSet is what the pod-resources loop sums: the main API server's Pods (the fields
// PodResources has), kept as the agent's informers keep theirs — one list, then a watch from
// its resource version — so that a pass sums the Nodes whose Pods changed instead of listing
// every Pod of the server (10,000 at 1,000 clusters) every 15 s.
type podSet struct {
	mu     sync.Mutex
	synced bool                                // listed at least once
	all    bool                                // listed again since the last take: every Node is dirty
	pods   map[string]*PodResources            // by namespace/name
	byNode map[string]map[string]*PodResources // the Pods that count, by Node and namespace/name
	dirty  map[string]struct{}                 // Nodes whose Pods changed since the last take
}

func podKey(p *PodResources) string { return p.Metadata.Namespace + "/" + p.Metadata.Name }

// replace starts over from a list.
func (x *podSet) replace(items []PodResources) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.pods, x.byNode, x.dirty = map[string]*PodResources{}, map[string]map[string]*PodResources{}, map[string]struct{}{}
	for i := range items {
		x.putLocked(&items[i])
	}
	x.synced, x.all = true, true
}

// apply takes one watch event's Pod (deleted: gone).
func (x *podSet) apply(p *PodResources, deleted bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	key := podKey(p)
	if old := x.pods[key]; old != nil {
		delete(x.pods, key)
		if pods := x.byNode[old.Spec.NodeName]; pods[key] != nil {
			delete(pods, key)
			if len(pods) == 0 {
				delete(x.byNode, old.Spec.NodeName)
			}
			x.dirty[old.Spec.NodeName] = struct{}{}
		}
	}
	if !deleted {
		x.putLocked(p)
	}
}

func (x *podSet) putLocked(p *PodResources) {
	key := podKey(p)
	x.pods[key] = p
	if !p.Counts() {
		return
	}
	if x.byNode[p.Spec.NodeName] == nil {
		x.byNode[p.Spec.NodeName] = map[string]*PodResources{}
	}
	x.byNode[p.Spec.NodeName][key] = p
	x.dirty[p.Spec.NodeName] = struct{}{}
}

// take returns the Nodes whose Pods changed since the last take (all: every Node, after a
// list) and forgets them; ok is false until the first list.
func (x *podSet) take() (dirty map[string]struct{}, all, ok bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.synced {
		return nil, false, false
	}
	dirty, all, ok = x.dirty, x.all, true
	x.dirty, x.all = map[string]struct{}{}, false
	return dirty, all, ok
}

// markAll asks the next pass to compare every Node again (its node list failed).
func (x *podSet) markAll() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.all = true
}

// markDirty asks the next pass to look at node again (its write failed).
func (x *podSet) markDirty(node string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.dirty != nil {
		x.dirty[node] = struct{}{}
	}
}

// annotations are node's pod-resource annotations from the Pods that count on it.
func (x *podSet) annotations(node string) (requests, limits string) {
	x.mu.Lock()
	pods := make([]*PodResources, 0, len(x.byNode[node]))
	for _, p := range x.byNode[node] {
		pods = append(pods, p)
	}
	x.mu.Unlock()
	return podResourceAnnotations(pods)
}

// errRelist ends a watch whose resource version the API server no longer has.
var errRelist = errors.New("resource version too old: list again")

// podWatchLoop keeps the index: a list, then watches from the last resource version seen (a
// watch the server ends is resumed; one it refuses as too old is a new list), with a pause of a
// second, doubling to 30 s, after errors.
func (m *Manager) podWatchLoop(ctx context.Context) {
	pause := time.Second
	wait := func(err error) {
		if ctx.Err() == nil {
			m.met.Errors.WithLabelValues("pod_watch").Inc()
			m.log.Warn("pod watch interrupted", zap.Error(err), zap.Duration("retry_in", pause))
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
		pause = min(2*pause, 30*time.Second)
	}
	for ctx.Err() == nil {
		items, rv, err := m.main.kube.listPodResources(ctx, "")
		if err != nil {
			wait(err)
			continue
		}
		m.pods.replace(items)
		for ctx.Err() == nil {
			var n int
			rv, n, err = m.main.kube.watchPodResources(ctx, rv, m.pods.apply)
			if n > 0 {
				pause = time.Second
			}
			if errors.Is(err, errRelist) {
				break
			}
			if err != nil {
				wait(err)
			}
		}
	}
}

// watchPodResources watches every namespace's Pods from resource version rv (with bookmarks,
// for at most ten minutes) and hands each event's Pod to apply; it returns the last resource
// version seen and how many events came.
func (k *Kube) watchPodResources(ctx context.Context, rv string, apply func(*PodResources, bool)) (string, int, error) {
	rc, err := k.core.REST()
	if err != nil {
		return rv, 0, err
	}
	body, err := rc.Get().AbsPath("/api/v1/pods").Param("watch", "true").Param("resourceVersion", rv).
		Param("allowWatchBookmarks", "true").Param("timeoutSeconds", strconv.Itoa(600)).Stream(ctx)
	if apierrors.IsGone(err) || apierrors.IsResourceExpired(err) {
		return rv, 0, errRelist
	}
	if err != nil {
		return rv, 0, err
	}
	defer body.Close()
	dec := json.NewDecoder(body)
	for n := 0; ; n++ {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return rv, n, ctx.Err()
			}
			return rv, n, fmt.Errorf("decode a pod watch event: %w", err)
		}
		if ev.Type == "ERROR" {
			var st metav1.Status
			if json.Unmarshal(ev.Object, &st) == nil && (st.Code == 410 || st.Reason == metav1.StatusReasonExpired || st.Reason == metav1.StatusReasonGone) {
				return rv, n, errRelist
			}
			return rv, n, fmt.Errorf("pod watch error: %.200s", ev.Object)
		}
		var p PodResources
		if err := json.Unmarshal(ev.Object, &p); err != nil {
			return rv, n, fmt.Errorf("decode a pod watch event's object: %w", err)
		}
		if p.Metadata.ResourceVersion != "" {
			rv = p.Metadata.ResourceVersion
		}
		switch ev.Type {
		case "ADDED", "MODIFIED":
			apply(&p, false)
		case "DELETED":
			apply(&p, true)
		}
	}
}
