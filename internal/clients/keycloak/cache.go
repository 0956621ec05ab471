package keycloak

import "sync"

// groupCache remembers group ids by name so that steady-state lookups cost no requests:
// top-level parents by name and children by (parent, child). An entry is dropped when Keycloak
// answers 404 for its id, and callers then look it up again.
type groupCache struct {
	mu       sync.Mutex
	parents  map[string]string
	children map[childKey]string
}

type childKey struct{ parent, child string }

func newGroupCache() *groupCache {
	return &groupCache{parents: map[string]string{}, children: map[childKey]string{}}
}

func (g *groupCache) parent(name string) (string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	id, ok := g.parents[name]
	return id, ok
}

func (g *groupCache) setParent(name, id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.parents[name] = id
}

// dropParent forgets a parent and every child cached under it.
func (g *groupCache) dropParent(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.parents, name)
	for k := range g.children {
		if k.parent == name {
			delete(g.children, k)
		}
	}
}

func (g *groupCache) child(parent, child string) (string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	id, ok := g.children[childKey{parent, child}]
	return id, ok
}

func (g *groupCache) setChild(parent, child, id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.children[childKey{parent, child}] = id
}

func (g *groupCache) dropChild(parent, child string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.children, childKey{parent, child})
}

// dropID forgets every entry with this id (a deleted parent takes its children with it).
func (g *groupCache) dropID(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for name, pid := range g.parents {
		if pid == id {
			delete(g.parents, name)
			for k := range g.children {
				if k.parent == name {
					delete(g.children, k)
				}
			}
		}
	}
	for k, cid := range g.children {
		if cid == id {
			delete(g.children, k)
		}
	}
}
