package rancher

import (
	"context"
	"slices"
	"sync"
	"time"
)

// nameIndex is the cluster's projects by name, listed once per pass (invTTL) for every Create
// in it instead of one lookup per order. Projects this process creates or deletes are added or
// removed at once; a project someone else made meanwhile shows up as a duplicate name on the
// namespace (handled) or in the next listing, one deleted meanwhile is caught by the read that
// precedes an adoption.
type nameIndex struct {
	mu     sync.Mutex
	at     time.Time
	byName map[string][]Project
}

// lookup returns the projects called name; cached reports an answer from an earlier listing.
func (n *nameIndex) lookup(ctx context.Context, b *Backend, name string) ([]Project, bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.byName != nil && time.Since(n.at) < b.invTTL {
		return slices.Clone(n.byName[name]), true, nil
	}
	at := time.Now()
	all, err := b.v3.Projects(ctx, b.cfg.clusterID, "")
	if err != nil {
		return nil, false, err
	}
	n.byName, n.at = map[string][]Project{}, at
	for _, p := range all {
		n.byName[p.Name] = append(n.byName[p.Name], p)
	}
	return slices.Clone(n.byName[name]), false, nil
}

func (n *nameIndex) add(p Project) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.byName != nil {
		n.byName[p.Name] = append(n.byName[p.Name], p)
	}
}

func (n *nameIndex) remove(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for name, list := range n.byName {
		n.byName[name] = slices.DeleteFunc(list, func(p Project) bool { return p.ID == id })
	}
}
